import { ATTACK_DEPRECATED_TECHNIQUES, ATTACK_GROUPS, ATTACK_MITIGATIONS, ATTACK_SOFTWARE } from '../data/attack';
import { ATTACK_LEGACY_TACTICS, ATTACK_MATRIX, ATTACK_TACTICS, ATTACK_VERSION } from '../data/attack-matrix';
import { dupes } from './metadata';
import { finding, type LintFinding, type Validator } from './types';

const idSet = (text: string): Set<string> => new Set(text.split(/\s+/).filter(Boolean));
// Built on first use: keeps module load cheap for callers that never lint.
let attackSets: { techniques: Set<string>; deprecated: Set<string>; groups: Set<string>; software: Set<string>; mitigations: Set<string>; maxTechnique: number } | undefined;
function attack() {
  if (!attackSets) {
    // The current release's techniques come from the matrix the reports use too (one source of truth).
    const techniques = new Set(ATTACK_MATRIX.techniques.map((t) => t.id.toLowerCase()));
    const deprecated = idSet(ATTACK_DEPRECATED_TECHNIQUES);
    for (const w of ATTACK_MATRIX.withdrawn) deprecated.add(w.id.toLowerCase());
    for (const t of techniques) deprecated.delete(t);
    const maxTechnique = Math.max(...[...techniques, ...deprecated].map((t) => Number(t.slice(1, 5))));
    attackSets = { techniques, deprecated, groups: idSet(ATTACK_GROUPS), software: idSet(ATTACK_SOFTWARE), mitigations: idSet(ATTACK_MITIGATIONS), maxTechnique };
  }
  return attackSets;
}
const TACTICS = new Set(ATTACK_TACTICS);
/** Tactic tags of the current release and of earlier ones (`defense-evasion`): either makes a rule's techniques "tagged with a tactic". */
const ANY_TACTIC = new Set([...ATTACK_TACTICS, ...Object.keys(ATTACK_LEGACY_TACTICS)]);

const TAG_RE = /^[a-z0-9_-]+\.[a-z0-9._-]+$/;
const NAMESPACES = new Set(['attack', 'car', 'cve', 'd3fend', 'detection', 'stp', 'tlp']);
const TLP = new Set(['clear', 'white', 'green', 'amber', 'amber-strict', 'red']);

function checkAttack(value: string): { severity: 'warning' | 'info'; message: string } | undefined {
  const a = attack();
  if (/^t\d{4}(\.\d{3})?$/.test(value)) {
    if (a.techniques.has(value)) return undefined;
    if (a.deprecated.has(value)) return { severity: 'warning', message: `ATT&CK technique ${value.toUpperCase()} is revoked or deprecated` };
    if (Number(value.slice(1, 5)) > a.maxTechnique) {
      return { severity: 'info', message: `ATT&CK technique ${value.toUpperCase()} is newer than the bundled ATT&CK ${ATTACK_VERSION}` };
    }
    return { severity: 'warning', message: `unknown ATT&CK technique ${value.toUpperCase()} (ATT&CK ${ATTACK_VERSION})` };
  }
  if (/^g\d{4}$/.test(value)) return a.groups.has(value) ? undefined : { severity: 'warning', message: `unknown ATT&CK group ${value.toUpperCase()}` };
  if (/^s\d{4}$/.test(value)) return a.software.has(value) ? undefined : { severity: 'warning', message: `unknown ATT&CK software ${value.toUpperCase()}` };
  if (/^m\d{4}$/.test(value)) return a.mitigations.has(value) ? undefined : { severity: 'warning', message: `unknown ATT&CK mitigation ${value.toUpperCase()}` };
  if (/^ds\d{4}$/.test(value)) return undefined;
  if (TACTICS.has(value)) return undefined;
  const legacy = ATTACK_LEGACY_TACTICS[value];
  if (legacy) {
    const into = legacy.splitInto.map((t) => `attack.${t}`).join(' and ');
    return { severity: 'info', message: `'attack.${value}' is a tactic of ATT&CK ${legacy.until} and earlier; ATT&CK ${ATTACK_VERSION} split it into ${into}` };
  }
  return { severity: 'warning', message: `'attack.${value}' is neither a technique, group, software, mitigation nor a tactic (ATT&CK ${ATTACK_VERSION})` };
}

const NAMESPACE_CHECKS: Record<string, (value: string) => string | undefined> = {
  car: (v) => (/^\d{4}-\d{2}-\d{3}$/.test(v) ? undefined : `'car.${v}' is not a CAR id (car.YYYY-MM-NNN)`),
  cve: (v) => (/^\d{4}-\d{4,}$/.test(v) ? undefined : `'cve.${v}' is not a CVE id (cve.YYYY-NNNN)`),
  d3fend: (v) => (/^d3f?-[a-z0-9-]+$/.test(v) ? undefined : `'d3fend.${v}' is not a D3FEND id`),
  detection: (v) => (['dfir', 'emerging-threats', 'threat-hunting'].includes(v) ? undefined : `'detection.${v}' must be dfir, emerging-threats or threat-hunting`),
  stp: (v) => (/^[1-5][auk]?$/.test(v) ? undefined : `'stp.${v}' is not a Summiting the Pyramid score`),
  tlp: (v) => (TLP.has(v) ? undefined : `'tlp.${v}' is not a TLP level`),
};

export const tagValidators: Validator[] = [
  {
    name: 'tags',
    run: ({ document: d }) => {
      const out: LintFinding[] = [];
      const pos = d.positions.tags ?? d.pos;
      for (const [index, tag] of d.tags.entries()) {
        const at = d.positions[`tags[${index}]`] ?? pos;
        if (!TAG_RE.test(tag)) {
          out.push(finding('tag_format', 'warning', `tag '${tag}' does not match ^[a-z0-9_-]+\\.[a-z0-9._-]+$`, at, d.source));
          continue;
        }
        const dot = tag.indexOf('.');
        const ns = tag.slice(0, dot);
        const value = tag.slice(dot + 1);
        if (!NAMESPACES.has(ns)) {
          out.push(finding('namespace_tag', 'warning', `unknown tag namespace '${ns}'`, at, d.source));
          continue;
        }
        if (ns === 'attack') {
          const issue = checkAttack(value);
          if (issue) out.push(finding('attacktag', issue.severity, issue.message, at, d.source));
          continue;
        }
        const problem = NAMESPACE_CHECKS[ns]?.(value);
        if (problem) out.push(finding(`${ns === 'd3fend' ? 'd3_fend' : ns}tag`, 'warning', problem, at, d.source));
      }
      for (const t of dupes(d.tags)) out.push(finding('duplicate_tag', 'info', `tag '${t}' is listed twice`, pos, d.source));
      const detection = d.tags.filter((t) => t.startsWith('detection.'));
      if (detection.length > 1) out.push(finding('sigmahq_tags_unique_detection', 'warning', 'more than one detection.* tag', pos, d.source));
      const tlp = d.tags.filter((t) => t.startsWith('tlp.'));
      if (tlp.length > 1) out.push(finding('sigmahq_tags_unique_tlp', 'warning', 'more than one tlp.* tag', pos, d.source));
      const techniques = d.tags.filter((t) => /^attack\.t\d{4}/.test(t));
      const tactics = d.tags.filter((t) => t.startsWith('attack.') && ANY_TACTIC.has(t.slice('attack.'.length)));
      if (techniques.length > 0 && tactics.length === 0) {
        out.push(finding('sigmahq_tags_techniques_without_tactics', 'warning', 'ATT&CK techniques are tagged without any tactic', pos, d.source));
      }
      return out;
    },
  },
];
