import { referencedNames } from '../condition';
import type { DetectionItem, SigmaDocument } from '../model';
import { analyseRegex, isCatastrophic } from '../regex';
import { conditionNodes, documentItems, flatValues } from '../walk';
import { finding, type LintFinding, type Validator } from './types';

type Detected = Extract<SigmaDocument, { detection: unknown }>;
const withDetection = (d: SigmaDocument): d is Detected => d.kind !== 'correlation';

function forItems(d: SigmaDocument, fn: (item: DetectionItem, identifier: string) => LintFinding[]): LintFinding[] {
  return documentItems(d).flatMap(({ item, identifier }) => fn(item, identifier));
}

const stringRaws = (item: DetectionItem) => item.raw.filter((r): r is typeof r & { value: string } => typeof r.value === 'string');

export const detectionValidators: Validator[] = [
  {
    name: 'identifier_with_pipe',
    run: ({ document: d }) => {
      if (!withDetection(d)) return [];
      return [...d.detection.identifiers.values()]
        .filter((i) => i.name.includes('|'))
        .map((i) =>
          finding(
            'identifier_with_pipe',
            'warning',
            `search identifier '${i.name}' contains '|': it is part of the name, not a modifier of the values below, and a condition can reach it only through an 'x of' pattern`,
            i.pos,
            d.source,
          ),
        );
    },
  },
  {
    name: 'dangling_detection',
    run: ({ document: d }) => {
      if (!withDetection(d) || d.detection.conditions.length === 0) return [];
      const used = new Set<string>();
      for (const c of d.detection.conditions) referencedNames(c.ast, used);
      return [...d.detection.identifiers.values()]
        .filter((i) => !used.has(i.name))
        .map((i) => finding('dangling_detection', 'warning', `search identifier '${i.name}' is not referenced by the condition`, i.pos, d.source));
    },
  },
  {
    name: 'of_them_conditions',
    run: ({ document: d }) => {
      if (!withDetection(d)) return [];
      const out: LintFinding[] = [];
      for (const c of d.detection.conditions) {
        for (const n of conditionNodes(c.ast)) {
          if (n.kind !== 'of') continue;
          if (n.them && n.quantifier === 'all') out.push(finding('all_of_them_condition', 'warning', "'all of them' is discouraged; name the identifiers", n.pos, d.source));
          if (n.them && d.detection.identifiers.size === 1) {
            out.push(finding('them_condition_with_single_detection', 'info', `'${n.quantifier === 'all' ? 'all' : '1'} of them' with a single identifier`, n.pos, d.source));
          }
          if (!n.them && !n.pattern.includes('*')) {
            out.push(finding('sigmahq_missing_asterisk_condition', 'info', `'of ${n.pattern}' has no '*'; reference the identifier directly`, n.pos, d.source));
          }
        }
      }
      return out;
    },
  },
  {
    name: 'invalid_modifier_combinations',
    run: ({ document: d }) =>
      forItems(d, (item) => {
        const out: LintFinding[] = [];
        const mods = item.modifiers;
        const has = (m: string) => mods.includes(m);
        const add = (msg: string) => out.push(finding('invalid_modifier_combinations', 'warning', msg, item.pos, d.source));
        if (has('all') && !has('contains') && item.field !== null && !item.values.some((v) => v.kind === 'regex'))
          add("'all' without 'contains' can never match several whole values");
        if (has('base64offset') && !has('contains')) add("'base64offset' needs 'contains'");
        if (has('windash') && has('all')) add("'windash' together with 'all'");
        const repeated = mods.filter((m, i) => m !== 'base64' && mods.indexOf(m) !== i);
        if (repeated.length > 0) add(`modifier repeated: ${[...new Set(repeated)].join(', ')}`);
        if (has('all') && item.raw.length === 1) out.push(finding('sigmahq_invalid_all_modifier', 'warning', "'all' on a single value", item.pos, d.source));
        return out;
      }),
  },
  {
    name: 'regex',
    run: ({ document: d }) =>
      forItems(d, (item) => {
        const out: LintFinding[] = [];
        for (const v of flatValues(item.values)) {
          if (v.kind !== 'regex') continue;
          const issues = analyseRegex(v.pattern);
          if (isCatastrophic(issues)) {
            out.push(
              finding(
                'regex_catastrophic_backtracking',
                'error',
                `/${v.pattern}/: ${issues
                  .filter((i) => i.code !== 'lookaround' && i.code !== 'backreference' && i.code !== 'inline-flags')
                  .map((i) => i.message)
                  .join('; ')}`,
                item.pos,
                d.source,
              ),
            );
          }
          for (const i of issues) {
            if (i.code === 'lookaround' || i.code === 'backreference' || i.code === 'inline-flags') {
              out.push(finding('sigmahq_unsupported_regex_group_construct', 'warning', `/${v.pattern}/: ${i.message}`, item.pos, d.source));
            }
          }
        }
        return out;
      }),
  },
  {
    name: 'value_checks',
    run: ({ document: d }) =>
      forItems(d, (item) => {
        const out: LintFinding[] = [];
        const isRe = item.modifiers[0] === 're';
        for (const r of stringRaws(item)) {
          if (/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.value) || (r.value.includes('\t') && !isRe)) {
            out.push(finding('control_character', 'warning', 'value contains a control character (an accidental \\t-style escape?)', r.pos, d.source));
          }
          if (isRe) continue;
          if (/(^|[^\\])\*\*/.test(r.value)) out.push(finding('double_wildcard', 'info', `'**' in '${r.value}'`, r.pos, d.source));
          if (/\\[*?]/.test(r.value.replace(/\\\\/g, ''))) out.push(finding('escaped_wildcard', 'info', `escaped wildcard in '${r.value}'`, r.pos, d.source));
          // YAML 1.1 (pySigma's reader) takes a plain 010 for the octal number 8; detflow keeps the text.
          if (!r.quoted && /^[-+]?0[0-7]+$/.test(r.value)) {
            out.push(
              finding(
                'octal_looking_number',
                'info',
                `'${r.value}' is matched as the text '${r.value}'; pySigma reads it as the octal number ${parseInt(r.value, 8)}: quote it to make the intent explicit`,
                r.pos,
                d.source,
              ),
            );
          }
          if (r.quoted && /^-?\d+$/.test(r.value) && item.modifiers.length === 0) {
            out.push(finding('number_as_string', 'info', `number written as a string: '${r.value}'`, r.pos, d.source));
          }
          if (item.modifiers.length === 0 && item.field !== null) {
            const inner = r.value.replace(/^\*|\*$/g, '');
            if (r.value !== inner && inner.length > 0 && !/(^|[^\\])[*?]/.test(inner)) {
              const mod = r.value.startsWith('*') && r.value.endsWith('*') ? 'contains' : r.value.startsWith('*') ? 'endswith' : 'startswith';
              out.push(finding('wildcards_instead_of_modifiers', 'info', `'${r.value}' could use '|${mod}'`, r.pos, d.source));
            }
          }
        }
        // Under these modifiers 'Ab' and 'aB' are different values (base64 of different bytes, a
        // case-sensitive pattern or comparison): only an exact repeat is a duplicate.
        const mods = new Set(item.modifiers);
        const caseSensitive =
          mods.has('cased') || mods.has('base64') || mods.has('base64offset') || mods.has('fieldref') || (mods.has('re') && !mods.has('i') && !mods.has('ignorecase'));
        const seen = new Set<string>();
        for (const r of item.raw) {
          const key = typeof r.value === 'string' ? (caseSensitive ? r.value : r.value.toLowerCase()) : String(r.value);
          if (seen.has(key)) out.push(finding('sigmahq_field_duplicate_value', 'warning', `value '${String(r.value)}' is listed twice`, r.pos, d.source));
          seen.add(key);
        }
        if (item.field !== null && /\s/.test(item.field))
          out.push(finding('sigmahq_space_field_name', 'warning', `field name '${item.field}' contains a space`, item.pos, d.source));
        return out;
      }),
  },
  {
    name: 'fieldname_logsource',
    run: ({ document: d }) => {
      if (d.kind !== 'rule') return [];
      return Object.keys(d.logsource.custom).map((k) => finding('fieldname_logsource', 'warning', `logsource has unknown key '${k}'`, d.logsource.pos, d.source));
    },
  },
  {
    name: 'specific_instead_of_generic_logsource',
    run: ({ document: d }) => {
      if (d.kind !== 'rule') return [];
      const ls = d.logsource;
      if (ls.product !== 'windows' || (ls.service !== 'sysmon' && ls.service !== 'security') || ls.category !== undefined) return [];
      const generic = ls.service === 'sysmon' ? new Set([1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 29]) : new Set([4688]);
      const out: LintFinding[] = [];
      for (const { item } of documentItems(d)) {
        if (item.field !== 'EventID') continue;
        for (const r of item.raw) {
          if (typeof r.value === 'number' && generic.has(r.value)) {
            out.push(finding('specific_instead_of_generic_logsource', 'warning', `EventID ${r.value} of ${ls.service} has a generic logsource category`, r.pos, d.source));
          }
        }
      }
      return out;
    },
  },
  {
    name: 'sigmahq_category_event_id',
    run: ({ document: d }) => {
      if (d.kind !== 'rule' || d.logsource.product !== 'windows' || d.logsource.category === undefined) return [];
      return documentItems(d)
        .filter(({ item }) => item.field === 'EventID')
        .map(({ item }) => finding('sigmahq_category_event_id', 'warning', `EventID is implied by the category '${d.logsource.category}'`, item.pos, d.source));
    },
  },
  {
    name: 'sigmahq_field_user',
    run: ({ document: d }) =>
      forItems(d, (item) =>
        item.field !== null && /^(User|SubjectUserName|TargetUserName|AccountName)$/i.test(item.field)
          ? stringRaws(item)
              .filter((r) => /AUTHORI|AUTORI/i.test(r.value))
              .map((r) => finding('sigmahq_field_user', 'warning', `'${r.value}' is localised on non-English systems; match the SID or use endswith`, r.pos, d.source))
          : [],
      ),
  },
  {
    name: 'sigmahq_invalid_hash_kv',
    run: ({ document: d }) =>
      forItems(d, (item) =>
        item.field === 'Hashes'
          ? stringRaws(item)
              .filter((r) => !/^\*?(MD5|SHA1|SHA256|IMPHASH)=[0-9A-Fa-f]+\*?$/i.test(r.value))
              .map((r) => finding('sigmahq_invalid_hash_kv', 'warning', `Hashes value '${r.value}' is not ALGO=hexdigest`, r.pos, d.source))
          : [],
      ),
  },
  {
    name: 'correlation_checks',
    run: ({ document: d }) => {
      if (d.kind !== 'correlation') return [];
      const out: LintFinding[] = [];
      const pos = d.positions.correlation ?? d.pos;
      if (d.groupBy.length === 0) out.push(finding('sigmahq_correlation_group_by_existence', 'warning', 'correlation has no group-by', pos, d.source));
      if ((d.type === 'temporal' || d.type === 'temporal_ordered') && d.rules.length < 2) {
        out.push(finding('sigmahq_correlation_rules_minimum', 'warning', `${d.type} needs at least two rules`, pos, d.source));
      }
      return out;
    },
  },
];
