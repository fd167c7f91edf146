import { toJS, type YMap, type YNode, type YPair, type YScalar } from '../yamltree';

/** Shape tests and conversions on the YAML tree that every document kind reads. */

export type Pair = YPair;

export const isMap = (n: YNode | null | undefined): n is YMap => n?.kind === 'map';
export const isSeq = (n: YNode | null | undefined): n is Extract<YNode, { kind: 'seq' }> => n?.kind === 'seq';
export const isScalar = (n: YNode | null | undefined): n is YScalar => n?.kind === 'scalar';
export const isNull = (n: YNode | null | undefined): boolean => n === null || n === undefined || (n.kind === 'scalar' && n.value === null);

export function mapEntries(map: YMap): Array<[string, Pair]> {
  return map.pairs.map((pair) => [pair.key, pair]);
}

export const toPlain = (node: YNode | null | undefined): unknown => (node ? toJS(node) : null);
