import { existsSync, readdirSync, readFileSync, statSync } from 'fs';
import { basename, join, relative, resolve } from 'path';

/**
 * Shared-folder fixtures: SigmaHQ rules (Detection Rule License 1.1, authors kept in each file) are
 * read at run time from the `shared/` folder beside the project (wherever the project is cloned),
 * and never copied into this repository. DETFLOW_SIGMA_SHARED overrides the location.
 */
export const SHARED_SIGMA =
  process.env.DETFLOW_SIGMA_SHARED ??
  [resolve(__dirname, '../../../../shared/sigma'), '/work/shared/sigma'].find((d) => existsSync(d)) ??
  resolve(__dirname, '../../../../shared/sigma');
export const CORPUS_DIR = join(SHARED_SIGMA, 'corpus');
export const REGRESSION_DIR = join(SHARED_SIGMA, 'regression');

export function walkFiles(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walkFiles(p, suffix));
    else if (p.endsWith(suffix)) out.push(p);
  }
  return out;
}

export function corpusFiles(): string[] {
  return walkFiles(CORPUS_DIR, '.yml');
}

export function corpusRelative(path: string): string {
  return relative(CORPUS_DIR, path);
}

/** evtx_dump output may hold several pretty-printed objects back to back: split on balanced braces. */
export function parseConcatenatedJson(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}') {
      depth--;
      if (depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    }
  }
  return out;
}

type Json = null | string | number | boolean | Json[] | { [k: string]: Json };

function flattenInto(prefix: string, value: Json, out: Record<string, unknown>): void {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    out[prefix] = value;
    // Defender renders data names with spaces ("Source Name"); Sigma rules and evtx-sigma-checker
    // use the space-less form (SourceName), so both keys are provided.
    if (prefix.includes(' ')) out[prefix.replace(/ /g, '')] = value;
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k === '#attributes' && v && typeof v === 'object' && !Array.isArray(v)) {
      // XML attributes become <Tag>_<Attr>, e.g. Provider_Name (regression README).
      for (const [ak, av] of Object.entries(v)) out[prefix ? `${prefix}_${ak}` : ak] = av;
    } else if (k === '#text') {
      out[prefix] = v;
    } else {
      flattenInto(prefix ? `${prefix}_${k}` : k, v, out);
    }
  }
}

/** Flattens `Event.System.*` and `Event.EventData.*` (and UserData) to Sigma field names. */
export function flattenWindowsEvent(doc: unknown): Record<string, unknown> {
  const event = (doc as { Event?: Record<string, Json> }).Event ?? {};
  const out: Record<string, unknown> = {};
  for (const section of ['System', 'EventData', 'UserData']) {
    const v = event[section];
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [k, child] of Object.entries(v)) {
        if (k === '#attributes') continue;
        flattenInto(k, child, out);
      }
    }
  }
  return out;
}

export interface RegressionSample {
  readonly ruleId: string;
  readonly rulePath: string;
  /** The rule path `mapping.json` lists for the sample (cross-check). */
  readonly mappedRulePath: string | undefined;
  readonly samplePath: string;
  readonly matchCount: number | null;
  readonly events: Record<string, unknown>[];
}

/** Corpus rule id → path, read from each file's top-level `id:` line. */
function corpusRuleIds(): Map<string, string> {
  const ids = new Map<string, string>();
  for (const path of corpusFiles()) {
    const m = /^id:\s*([0-9a-f-]{36})\s*$/m.exec(readFileSync(path, 'utf8'));
    if (m) ids.set(m[1]!, path);
  }
  return ids;
}

/**
 * Samples are named `<rule-id>.json` inside `regression_data/<rule path without .yml>/`, so the
 * rule is found by id (one rule was renamed after its sample folder was created); `mapping.json`
 * is kept as a cross-check.
 */
export function regressionSamples(): RegressionSample[] {
  const mapping = JSON.parse(readFileSync(join(REGRESSION_DIR, 'mapping.json'), 'utf8')) as Array<{
    rule_id: string;
    rule_path_local: string;
    sample: string;
    match_count: number | null;
  }>;
  const ids = corpusRuleIds();
  return walkFiles(join(REGRESSION_DIR, 'regression_data'), '.json').map((samplePath) => {
    const rel = relative(REGRESSION_DIR, samplePath);
    const ruleId = basename(samplePath, '.json');
    const row = mapping.find((m) => m.sample === rel);
    const rulePath = ids.get(ruleId) ?? join(CORPUS_DIR, relative('regression_data', join(rel, '..')) + '.yml');
    const events = parseConcatenatedJson(readFileSync(samplePath, 'utf8')).map(flattenWindowsEvent);
    return {
      ruleId,
      rulePath,
      mappedRulePath: row ? join(REGRESSION_DIR, row.rule_path_local) : undefined,
      samplePath: rel,
      matchCount: row?.match_count ?? null,
      events,
    };
  });
}
