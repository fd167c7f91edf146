import raw from './attack-enterprise.json';

/**
 * The MITRE ATT&CK Enterprise matrix detflow ships: one source of truth for lint's tag checks and
 * the coverage reports. The data is `attack-enterprise.json`, written by `npm run attack:update`
 * (tools/attack-matrix.mjs) from MITRE's STIX bundle or an extract of it; never edited by hand.
 * © The MITRE Corporation, reproduced with its permission (see the file's `attribution` and NOTICE).
 */

export type AttackTactic = { readonly id: string; readonly shortname: string; readonly name: string };
export type AttackTechnique = {
  /** `T1059`, or `T1059.001` for a sub-technique. */
  readonly id: string;
  readonly name: string;
  /** Shortnames of the tactics it belongs to, in matrix order. */
  readonly tactics: readonly string[];
  /** The parent technique of a sub-technique. */
  readonly parent?: string;
};
/** A technique the release revoked (with what replaced it, when the source tells) or deprecated. */
export type AttackWithdrawn = { readonly id: string; readonly reason: 'revoked' | 'deprecated'; readonly revoked_by?: string };

export type AttackMatrix = {
  readonly attribution: string;
  readonly domain: 'enterprise-attack';
  /** The ATT&CK release, e.g. `19` or `18.1`. */
  readonly version: string;
  /** The release date (YYYY-MM-DD), when the source gives it. */
  readonly released: string | null;
  readonly source: { readonly label: string; readonly format: string; readonly licence?: string; readonly sha256: string; readonly publisher?: string };
  /** How the tactic order was established (the bundle's matrix, or given when the source keeps none). */
  readonly tactic_order: string;
  readonly counts: { readonly tactics: number; readonly techniques: number; readonly sub_techniques: number };
  /** In matrix order (the Navigator's columns). */
  readonly tactics: readonly AttackTactic[];
  /** Techniques and sub-techniques neither revoked nor deprecated, sorted by id. */
  readonly techniques: readonly AttackTechnique[];
  readonly withdrawn: readonly AttackWithdrawn[];
};

export const ATTACK_MATRIX: AttackMatrix = raw as unknown as AttackMatrix;

/** The bundled ATT&CK release, as lint's messages and the reports name it. */
export const ATTACK_VERSION: string = ATTACK_MATRIX.version;

/** Tactic shortnames of the bundled release, in matrix order (the `attack.<tactic>` tags Sigma uses). */
export const ATTACK_TACTICS: readonly string[] = ATTACK_MATRIX.tactics.map((t) => t.shortname);

/**
 * Tactics of earlier releases that rules still carry, and what became of them. ATT&CK 19 split
 * Defense Evasion (TA0005) into Stealth, which kept its id, and Defense Impairment (TA0112).
 * Kept by hand: a release note says this, the STIX bundle does not. docs/decisions/0054 says how
 * the reports count such a tag.
 */
export const ATTACK_LEGACY_TACTICS: Readonly<Record<string, { readonly until: string; readonly splitInto: readonly string[]; readonly keptIdBy: string }>> = {
  'defense-evasion': { until: '18.1', splitInto: ['stealth', 'defense-impairment'], keptIdBy: 'stealth' },
};

type AttackIndex = {
  techniques: ReadonlyMap<string, AttackTechnique>;
  tactics: ReadonlyMap<string, AttackTactic>;
  withdrawn: ReadonlyMap<string, AttackWithdrawn>;
};
let index: AttackIndex | undefined;

/** Lookups by id (techniques, withdrawn, upper case) and by shortname (tactics); built on first use. */
export function attackIndex(): AttackIndex {
  index ??= {
    techniques: new Map(ATTACK_MATRIX.techniques.map((t) => [t.id, t])),
    tactics: new Map(ATTACK_MATRIX.tactics.map((t) => [t.shortname, t])),
    withdrawn: new Map(ATTACK_MATRIX.withdrawn.map((w) => [w.id, w])),
  };
  return index;
}
