import { InterceptingCall, Metadata, status as grpcStatus, type Interceptor } from '@grpc/grpc-js';

type InterceptingCallInterface = ConstructorParameters<typeof InterceptingCall>[0];
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { ALL_SEARCH_ATTRIBUTES } from '../workflows/contracts';

/** What the client needs to know of Temporal's health: whether it is known to be down, and why. */
export type TemporalAvailability = {
  isDown(): boolean;
  /** Says since when and why, for the error the caller gets. */
  describeDown(): string;
};

const PROBE_METHOD = '/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo';

export async function connectClient(address: string, namespace: string, availability?: TemporalAvailability): Promise<Client> {
  const connection = await Connection.connect({ address, ...(availability ? { interceptors: availabilityInterceptors(availability) } : {}) });
  return new Client({ connection, namespace });
}

/**
 * While Temporal is known to be down, a call fails at once with UNAVAILABLE (which the API answers
 * as 503 with Retry-After) instead of being retried for many seconds; a call already retrying stops
 * at its next attempt. The probe's own call always goes through: it is how Temporal is seen back.
 */
function availabilityInterceptors(availability: TemporalAvailability): Interceptor[] {
  const retry = defaultGrpcRetryOptions();
  const failFast: Interceptor = (options, nextCall) => {
    if (!availability.isDown() || options.method_definition.path === PROBE_METHOD) return new InterceptingCall(nextCall(options));
    return new InterceptingCall(refusedCall(availability.describeDown()));
  };
  const retryWhileUp = makeGrpcRetryInterceptor({
    delayFunction: retry.delayFunction,
    retryableDecider: (attempt, status) => !availability.isDown() && retry.retryableDecider(attempt, status),
  });
  return [failFast, retryWhileUp];
}

/** A call that never leaves the process: it ends UNAVAILABLE, on the next tick (the caller finishes starting it first). */
function refusedCall(details: string): InterceptingCallInterface {
  return {
    start: (_metadata, listener) => process.nextTick(() => listener?.onReceiveStatus?.({ code: grpcStatus.UNAVAILABLE, details, metadata: new Metadata() })),
    sendMessage: () => undefined,
    sendMessageWithContext: () => undefined,
    startRead: () => undefined,
    halfClose: () => undefined,
    cancelWithStatus: () => undefined,
    getPeer: () => '',
    getAuthContext: () => null,
  };
}

/** Whether the Temporal frontend answers, within the probe's deadline. */
export async function probeTemporal(client: Client, timeoutMs: number): Promise<void> {
  await client.connection.withDeadline(Date.now() + timeoutMs, () => client.connection.workflowService.getSystemInfo({}));
}

/**
 * Registers our search attributes on a server we did not start (TEMPORAL_ADDRESS). Only the missing
 * ones are added, so running it from every process at start is harmless.
 */
export async function ensureSearchAttributes(client: Client, namespace: string): Promise<void> {
  const existing = await client.connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set([...Object.keys(existing.customAttributes ?? {}), ...Object.keys(existing.systemAttributes ?? {})]);
  const missing = ALL_SEARCH_ATTRIBUTES.filter((k) => !known.has(k.name));
  if (missing.length === 0) return;
  const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
  try {
    await client.connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((k) => [k.name, keyword])),
    });
  } catch (err) {
    // Another process may have added them between our list and add.
    if (!/already exists/i.test((err as Error).message)) throw err;
  }
}
