/**
 * Sigma engine benchmark: `npx tsx bench/sigma.ts`.
 *   1. parse + lint rules/s over the shared SigmaHQ corpus (target ≥ 2,000/s)
 *   2. compile-to-all-backends rules/s (SQL, SPL, ES|QL, Lucene, KQL)
 *   3. evaluator events/s on a typical three-selection rule (target ≥ 1,000,000/s per core)
 *   4. whole-corpus evaluation events/s on one core: every rule's own matcher on every event (naive,
 *      the same-run baseline) and the ruleset routed by logsource and prefiltered on literals
 *      (sigma/ruleset; target ≥ 50,000/s per core)
 *   5. pySigma's conversion rate for the same rules and the same five targets, measured in the same
 *      run by tools/pysigma/convert.py (it times its own conversion loop, so Python start-up, imports
 *      and YAML parsing are excluded), and detflow's rate / pySigma's (target ≥ 10×)
 * The corpus is read from the shared folder beside the project (override with DETFLOW_SIGMA_SHARED).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { convertRule, type BackendName } from '../sigma/backends';
import { compileRule } from '../sigma/evaluate';
import { lintText } from '../sigma/lint';
import type { SigmaRule } from '../sigma/model';
import { parseRule, parseSigma } from '../sigma/parse';
import { compileRuleset, matchEveryRule } from '../sigma/ruleset';
import { runPySigma } from '../test/conformance/pysigma-runner';
import { SHARED_SIGMA } from '../test/sigma/support/corpus';
import { generateRulesetEvents } from '../test/sigma/support/ruleset-events';

const corpusDir = join(SHARED_SIGMA, 'corpus');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.yml') ? [p] : [];
  });
}

/** Best of several timed rounds after a warm-up, in operations per second. */
function rate(ops: number, fn: () => void, rounds = 5): number {
  fn();
  let best = 0;
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    fn();
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    best = Math.max(best, ops / seconds);
  }
  return best;
}

/**
 * Like `rate`, but per CPU-second of this process (user + system): the one-core figure even when
 * other processes share the machine (the load average is printed beside it).
 */
function cpuRate(ops: number, fn: () => void, rounds = 3): number {
  fn();
  let best = 0;
  for (let i = 0; i < rounds; i++) {
    const start = process.cpuUsage();
    fn();
    const used = process.cpuUsage(start);
    best = Math.max(best, ops / ((used.user + used.system) / 1e6));
  }
  return best;
}

const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

const texts = walk(corpusDir).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
const parseLint = rate(texts.length, () => {
  for (const { path, text } of texts) lintText(text, { source: path });
});
const parseOnly = rate(texts.length, () => {
  for (const { text } of texts) parseSigma(text);
});

const ruleFiles: string[] = [];
const rules: SigmaRule[] = texts.flatMap(({ path, text }) => {
  const c = parseSigma(text);
  const found = c.errors.length === 0 ? c.documents.filter((d): d is SigmaRule => d.kind === 'rule') : [];
  if (found.length > 0) ruleFiles.push(path);
  return found;
});
const backends: BackendName[] = ['sql', 'splunk', 'esql', 'lucene', 'kql'];
let converted = 0;
let unsupported = 0;
const compile = rate(rules.length, () => {
  converted = 0;
  unsupported = 0;
  for (const r of rules) {
    for (const b of backends) {
      try {
        convertRule(r, b);
        converted++;
      } catch {
        unsupported++;
      }
    }
  }
});

const typical = parseRule(`title: Encoded PowerShell from an unusual parent
logsource: {category: process_creation, product: windows}
detection:
    selection_img:
        - Image|endswith: ['\\powershell.exe', '\\pwsh.exe']
        - OriginalFileName: ['PowerShell.EXE', 'pwsh.dll']
    selection_cli:
        CommandLine|contains: [' -enc ', ' -EncodedCommand ', 'FromBase64String', 'IEX(', 'DownloadString']
    filter_parent:
        ParentImage|endswith: '\\explorer.exe'
    condition: all of selection_* and not filter_parent
`);
const match = compileRule(typical).match;
const events = Array.from({ length: 1024 }, (_, i) => ({
  EventID: 1,
  Image: i % 3 === 0 ? 'C:\\Windows\\System32\\svchost.exe' : 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
  OriginalFileName: i % 3 === 0 ? 'svchost.exe' : 'PowerShell.EXE',
  CommandLine: `"C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe" -NoProfile -ExecutionPolicy Bypass ${i % 64 === 0 ? '-enc SQBFAFgA' : `-File C:\\scripts\\job${i}.ps1`}`,
  ParentImage: i % 5 === 0 ? 'C:\\Windows\\explorer.exe' : 'C:\\Windows\\System32\\cmd.exe',
  User: 'NT AUTHORITY\\SYSTEM',
}));
const N = 2_000_000;
let hits = 0;
const evalRate = rate(N, () => {
  hits = 0;
  for (let i = 0; i < N; i++) if (match(events[i & 1023]!)) hits++;
});

console.log(`corpus: ${texts.length} files, ${rules.length} convertible rules`);
console.log(`parse only:          ${fmt(parseOnly)} rules/s`);
console.log(`parse + lint:        ${fmt(parseLint)} rules/s (target 2,000)`);
console.log(`compile to 5 backends: ${fmt(compile)} rules/s (${converted} queries, ${unsupported} explicit unsupported errors per pass)`);
console.log(`evaluator:           ${fmt(evalRate)} events/s on a three-selection rule (${hits} matches per ${fmt(N)} events; target 1,000,000)`);

// Whole corpus at once: every rule's logsource and matcher on every event, against the ruleset.
// Events: for each rule condition one event built to match it and one near miss, and 20 noise
// events (a rule's logsource, fields the corpus reads, benign text with a rule literal in 1 of 20).
const ruleset = compileRuleset(rules);
const stream = generateRulesetEvents(rules, { seed: 15, noisePerRuleEvent: 20, nearMisses: 1, literalShare: 0.05 });
let naiveMatched = 0;
let rulesetMatched = 0;
const naiveRate = cpuRate(stream.length, () => {
  naiveMatched = 0;
  for (const { event, logsource } of stream) if (matchEveryRule(ruleset.rules, event, logsource).length > 0) naiveMatched++;
});
const rulesetRate = cpuRate(stream.length, () => {
  rulesetMatched = 0;
  for (const { event, logsource } of stream) if (ruleset.match(event, logsource).length > 0) rulesetMatched++;
});
if (naiveMatched !== rulesetMatched) throw new Error(`ruleset matched ${rulesetMatched} events, every rule on its own ${naiveMatched}`);
console.log(
  `whole corpus:        ${ruleset.rules.length} rules (${ruleset.stats.anchored} prefiltered on literals), ${fmt(stream.length)} events, ${((100 * rulesetMatched) / stream.length).toFixed(1)}% matching some rule`,
);
console.log(`  every rule (naive): ${fmt(naiveRate)} events/s per core (per CPU-second; load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores)`);
console.log(`  routed + prefilter: ${fmt(rulesetRate)} events/s per core (${(rulesetRate / naiveRate).toFixed(1)}× naive; target 50,000)`);

// pySigma converts the same rule files to its SQLite, Splunk, ES|QL, Lucene and Kusto backends.
// Like detflow's pass above, no placeholder values are given: both refuse |expand rules explicitly.
const py = runPySigma({ mode: 'bench', rounds: 3, rules: ruleFiles.map((path) => ({ path })) }).bench!;
console.log(
  `pySigma ${py.backends.length} backends:  ${fmt(py.rules_per_second)} rules/s (${py.parsed} rules, ${py.converted} queries, ${py.failed} errors per pass; best of 3)`,
);
console.log(`detflow / pySigma:   ${(compile / py.rules_per_second).toFixed(1)}× conversion rate (target 10×)`);
