import type { SourcePosition } from '../errors';

/**
 * A minimal YAML tree (maps, sequences, scalars with source offsets) that the Sigma model is built
 * from. Two producers fill it: a fast parser for the block-style YAML subset Sigma rules are written
 * in, and the full `yaml` library, used whenever the fast parser meets anything outside that subset
 * (anchors, tags, multi-line quoted scalars, errors...). Parsing YAML dominates linting time, and
 * the fast path is several times quicker than building `yaml` Documents.
 */

export type YValue = string | number | boolean | null;

export interface YScalar {
  readonly kind: 'scalar';
  readonly value: YValue;
  readonly style: 'plain' | 'single' | 'double' | 'block';
  readonly offset: number;
}
export interface YSeq {
  readonly kind: 'seq';
  readonly items: YNode[];
  readonly offset: number;
}
export interface YPair {
  readonly key: string;
  readonly keyOffset: number;
  readonly value: YNode;
}
export interface YMap {
  readonly kind: 'map';
  readonly pairs: YPair[];
  readonly offset: number;
}
export type YNode = YScalar | YSeq | YMap;

export interface YamlProblem {
  readonly code: 'yaml-syntax' | 'yaml-duplicate-key';
  readonly message: string;
  readonly offset: number;
}

export interface YamlDocument {
  /** null for an empty document. */
  readonly root: YNode | null;
  readonly problems: readonly YamlProblem[];
}

export interface YamlStream {
  readonly documents: YamlDocument[];
  readonly position: (offset: number) => SourcePosition;
  /** Which producer built the tree (exposed for tests and benchmarks). */
  readonly producer: 'fast' | 'yaml';
}

export function isQuoted(node: YScalar): boolean {
  return node.style === 'single' || node.style === 'double';
}

export function toJS(node: YNode | null): unknown {
  if (node === null) return null;
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'seq') return node.items.map(toJS);
  const out: Record<string, unknown> = {};
  for (const p of node.pairs) out[p.key] = toJS(p.value);
  return out;
}
