import path from 'node:path';
import * as proto from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';

/**
 * `historyToJSON` / `historyFromJSON` of `@temporalio/common/lib/proto-utils`, with the same
 * ProtoJSON conversion, but through the protobufjs copy that `@temporalio/proto` is built on.
 *
 * Why not the SDK's own: in this install npm cannot hoist protobufjs 8 (grpc's proto-loader keeps
 * protobufjs 7 at the top), so `@temporalio/common` and `@temporalio/proto` each get a nested copy,
 * and the SDK functions throw `TypeError: type must be a Type` (protojson's `instanceof Type` check
 * sees the other copy's class). Resolving protojson from `@temporalio/proto`'s directory always
 * pairs it with the classes of the root it converts, deduplicated or not. The files written are the
 * standard JSON form of a history (as the Temporal CLI and UI export it), so the SDK's
 * `historyFromJSON` reads them too wherever it works.
 */
type ProtoJson = { toJson(type: unknown, message: unknown): unknown; fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): unknown };
const protoDir = path.dirname(require.resolve('@temporalio/proto/package.json'));
// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require(require.resolve('protobufjs/ext/protojson', { paths: [protoDir] })) as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType('temporal.api.history.v1.History');

export type History = proto.temporal.api.history.v1.IHistory;

/** A history as pretty-printed JSON (two-space indent, trailing newline, so diffs read well). */
export function historyToJSON(history: History): string {
  const message = proto.temporal.api.history.v1.History.fromObject(history);
  return `${JSON.stringify(protojson.toJson(historyType, message), null, 2)}\n`;
}

/**
 * A history from its JSON form, decoded (event ids as Longs), which `Worker.runReplayHistory` takes
 * as it is, without converting it again. Unknown fields (a newer server's) are ignored, as the SDK does.
 */
export function historyFromJSON(json: unknown): History {
  if (typeof json !== 'object' || json === null || !Array.isArray((json as { events?: unknown }).events)) {
    throw new TypeError('Invalid history, expected an object with an array of events');
  }
  return protojson.fromJson(historyType, json, { ignoreUnknownFields: true }) as History;
}
