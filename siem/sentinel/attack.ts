import { attackIndex } from '../../sigma';
import type { SentinelTactic } from './arm-client';

/**
 * A Sigma rule's ATT&CK tags as Sentinel's rule properties take them: `tactics` in Sentinel's enum
 * and `techniques` as parent technique ids (`T1059`; AlertRules.json's `techniques` takes no
 * sub-techniques). A technique's tactics count too, so a rule tagged only `attack.t1059.001` still
 * says Execution. ATT&CK 19 split Defense Evasion into Stealth and Defense Impairment; Sentinel's
 * enum still has DefenseEvasion only, which all three become.
 */
const TACTICS: Readonly<Record<string, SentinelTactic>> = {
  reconnaissance: 'Reconnaissance',
  'resource-development': 'ResourceDevelopment',
  'initial-access': 'InitialAccess',
  execution: 'Execution',
  persistence: 'Persistence',
  'privilege-escalation': 'PrivilegeEscalation',
  'defense-evasion': 'DefenseEvasion',
  stealth: 'DefenseEvasion',
  'defense-impairment': 'DefenseEvasion',
  'credential-access': 'CredentialAccess',
  discovery: 'Discovery',
  'lateral-movement': 'LateralMovement',
  collection: 'Collection',
  exfiltration: 'Exfiltration',
  'command-and-control': 'CommandAndControl',
  impact: 'Impact',
  // ATT&CK for ICS tactics Sentinel also names.
  'impair-process-control': 'ImpairProcessControl',
  'inhibit-response-function': 'InhibitResponseFunction',
};

/** Sentinel's tactic order (the matrix's), so the same tags always give the same list. */
const ORDER: readonly SentinelTactic[] = [
  'Reconnaissance',
  'ResourceDevelopment',
  'InitialAccess',
  'Execution',
  'Persistence',
  'PrivilegeEscalation',
  'DefenseEvasion',
  'CredentialAccess',
  'Discovery',
  'LateralMovement',
  'Collection',
  'Exfiltration',
  'CommandAndControl',
  'Impact',
  'PreAttack',
  'ImpairProcessControl',
  'InhibitResponseFunction',
];

export interface SentinelAttack {
  readonly tactics: SentinelTactic[];
  readonly techniques: string[];
}

export function sentinelAttack(tags: readonly string[]): SentinelAttack {
  const tactics = new Set<SentinelTactic>();
  const techniques = new Set<string>();
  const index = attackIndex();
  for (const tag of tags) {
    const m = /^attack\.(.+)$/i.exec(tag.trim());
    if (!m) continue;
    const name = m[1]!.toLowerCase();
    const tactic = TACTICS[name];
    if (tactic) {
      tactics.add(tactic);
      continue;
    }
    const t = /^t(\d{4})(?:\.\d{3})?$/.exec(name);
    if (!t) continue;
    const parent = `T${t[1]}`;
    techniques.add(parent);
    for (const shortname of index.techniques.get(name.toUpperCase())?.tactics ?? index.techniques.get(parent)?.tactics ?? []) {
      const mapped = TACTICS[shortname];
      if (mapped) tactics.add(mapped);
    }
  }
  return { tactics: ORDER.filter((t) => tactics.has(t)), techniques: [...techniques].sort() };
}
