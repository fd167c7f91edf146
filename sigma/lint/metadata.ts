import type { SigmaDocument } from '../model';
import { COMMON_KEYS } from '../parse/common-attributes';
import { finding, type LintFinding, type Validator } from './types';

/** Every top-level key a Sigma document of any kind may have, for "did you mean" suggestions. */
const KNOWN_KEYS = [...COMMON_KEYS, 'logsource', 'detection', 'fields', 'scope', 'correlation', 'filter', 'generate'];

function distance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j]!;
      dp[j] = Math.min(dp[j]! + 1, dp[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length]!;
}

const at = (doc: SigmaDocument, key: string) => doc.positions[key] ?? doc.pos;

function existence(key: 'id' | 'status' | 'level' | 'date' | 'author' | 'description', code: string, severity: 'warning' | 'info'): Validator {
  return {
    name: code,
    run: ({ document: d }) => (d[key] === undefined && !(key in d.positions) ? [finding(code, severity, `rule has no '${key}'`, d.pos, d.source)] : []),
  };
}

export const metadataValidators: Validator[] = [
  existence('id', 'identifier_existence', 'warning'),
  existence('status', 'sigmahq_status_existence', 'warning'),
  existence('level', 'sigmahq_level_existence', 'warning'),
  existence('date', 'sigmahq_date_existence', 'warning'),
  existence('author', 'sigmahq_author_existence', 'warning'),
  existence('description', 'sigmahq_description_existence', 'info'),
  {
    name: 'sigmahq_title_length',
    run: ({ document: d }) =>
      d.title.length > 110 ? [finding('sigmahq_title_length', 'warning', `title is ${d.title.length} characters (max 110)`, at(d, 'title'), d.source)] : [],
  },
  {
    name: 'sigmahq_title_start',
    run: ({ document: d }) => (/^detects?\b/i.test(d.title) ? [finding('sigmahq_title_start', 'info', "title should not start with 'Detect'", at(d, 'title'), d.source)] : []),
  },
  {
    name: 'sigmahq_title_end',
    run: ({ document: d }) => (d.title.endsWith('.') ? [finding('sigmahq_title_end', 'info', 'title should not end with a period', at(d, 'title'), d.source)] : []),
  },
  {
    name: 'sigmahq_description_length',
    run: ({ document: d }) =>
      d.description !== undefined && d.description.trim().length < 16
        ? [finding('sigmahq_description_length', 'info', 'description is shorter than 16 characters', at(d, 'description'), d.source)]
        : [],
  },
  {
    name: 'sigmahq_modified_date_order',
    run: ({ document: d }) =>
      d.date && d.modified && d.modified < d.date
        ? [finding('sigmahq_modified_date_order', 'warning', `modified (${d.modified}) is before date (${d.date})`, at(d, 'modified'), d.source)]
        : [],
  },
  {
    name: 'sigmahq_modified_without_date',
    run: ({ document: d }) =>
      d.modified && !d.date ? [finding('sigmahq_modified_without_date', 'warning', 'modified is set but date is not', at(d, 'modified'), d.source)] : [],
  },
  {
    name: 'sigmahq_redundant_modified',
    run: ({ document: d }) =>
      d.modified && d.date && d.modified === d.date ? [finding('sigmahq_redundant_modified', 'info', 'modified equals date', at(d, 'modified'), d.source)] : [],
  },
  {
    name: 'date_in_future',
    run: ({ document: d }) => {
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      return (['date', 'modified'] as const)
        .filter((k) => d[k] !== undefined && d[k]! > tomorrow)
        .map((k) => finding('date_in_future', 'warning', `${k} ${d[k]} is in the future`, at(d, k), d.source));
    },
  },
  {
    name: 'custom_attributes',
    run: ({ document: d }) => {
      const out: LintFinding[] = [];
      for (const key of Object.keys(d.custom)) {
        // Short keys tolerate one edit only, so `date_x`-style custom keys are not taken for typos.
        const limit = key.length > 6 ? 2 : 1;
        const near = KNOWN_KEYS.find((k) => k !== key && Math.abs(k.length - key.length) <= limit && distance(k, key.toLowerCase()) <= limit);
        if (near) out.push(finding('custom_attributes', 'warning', `unknown attribute '${key}': did you mean '${near}'?`, at(d, key), d.source));
      }
      return out;
    },
  },
  {
    name: 'duplicate_references',
    run: ({ document: d }) => dupes(d.references).map((r) => finding('duplicate_references', 'info', `reference listed twice: ${r}`, at(d, 'references'), d.source)),
  },
  {
    name: 'sigmahq_falsepositives_capital',
    run: ({ document: d }) =>
      d.falsepositives
        .filter((f) => /^[a-z]/.test(f))
        .map((f) => finding('sigmahq_falsepositives_capital', 'info', `false positive '${f}' should start with a capital letter`, at(d, 'falsepositives'), d.source)),
  },
  {
    name: 'sigmahq_falsepositives_banned_word',
    run: ({ document: d }) =>
      d.falsepositives
        .filter((f) => /\b(none|pentest|penetration test)\b/i.test(f))
        .map((f) => finding('sigmahq_falsepositives_banned_word', 'info', `false positive '${f}' uses a banned word`, at(d, 'falsepositives'), d.source)),
  },
  {
    name: 'sigmahq_link_in_description',
    run: ({ document: d }) =>
      d.description && /https?:\/\//.test(d.description)
        ? [finding('sigmahq_link_in_description', 'info', 'description contains a link; put it in references', at(d, 'description'), d.source)]
        : [],
  },
  {
    name: 'references',
    run: ({ document: d }) => {
      const at2 = at(d, 'references');
      const out: LintFinding[] = [];
      for (const r of d.references) {
        if (/^https?:\/\/github\.com\/[^/]+\/[^/]+\/(blob|tree)\/(main|master|dev|develop)\//i.test(r)) {
          out.push(finding('sigmahq_github_link', 'info', `GitHub link to a branch, not a commit: ${r}`, at2, d.source));
        }
        if (/^https?:\/\/attack\.mitre\.org\//i.test(r)) out.push(finding('sigmahq_mitre_link', 'info', `ATT&CK link belongs in tags: ${r}`, at2, d.source));
      }
      return out;
    },
  },
  {
    name: 'filename_length',
    run: ({ document: d, source }) => {
      const base = source?.split('/').pop();
      if (!base) return [];
      return base.length < 10 || base.length > 90
        ? [finding('filename_length', 'warning', `file name length ${base.length} is outside 10-90`, { line: 1, column: 1 }, d.source)]
        : [];
    },
  },
  {
    name: 'sigmahq_filename_convention',
    run: ({ document: d, source }) => {
      const base = source?.split('/').pop();
      return base && !/^[a-z0-9_]+\.yml$/.test(base)
        ? [finding('sigmahq_filename_convention', 'info', `file name '${base}' should be lowercase snake_case .yml`, { line: 1, column: 1 }, d.source)]
        : [];
    },
  },
  {
    name: 'sigmahq_status_to_high',
    run: ({ document: d }) =>
      d.status === 'stable' && d.kind === 'rule' && d.level === 'informational'
        ? [finding('sigmahq_status_to_high', 'info', 'a stable rule with level informational', at(d, 'status'), d.source)]
        : [],
  },
];

export function dupes(values: readonly string[]): string[] {
  const seen = new Set<string>();
  const out = new Set<string>();
  for (const v of values) {
    if (seen.has(v)) out.add(v);
    seen.add(v);
  }
  return [...out];
}
