import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { FileLint } from '../../cli/lint';
import { lintSarif, REJECTED_RULE_ID, sarifRoot } from '../../cli/lint-sarif';
import { lintForTarget } from '../../sigma/lint/for-target';
import { sarifSchemaErrors } from '../support/sarif-schema';

const root = path.join(os.tmpdir(), 'detflow-sarif-repo');

/** A rule with errors at known places: an unknown modifier on line 9, an undefined identifier on line 10. */
const BROKEN = `title: Broken
id: 7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f10
status: test
level: high
logsource:
  product: windows
detection:
  selection:
    Image|endswithh: 'x.exe'
  condition: selection and filter
`;

function linted(file: string, text: string): FileLint {
  return { file, seconds: 0, ok: true, report: lintForTarget(text, { name: 'local', kind: 'local' }) };
}

describe('lint as SARIF 2.1.0', () => {
  const broken = linted(path.join(root, 'rules', 'broken rule.yml'), BROKEN);
  const rejected: FileLint = { file: path.join(root, 'rules/huge.yml'), seconds: 0, ok: false, error: 'POST /rules/lint → 413 Payload Too Large: the rule is over 64 KiB' };

  it('validates against the SARIF 2.1.0 schema', () => {
    const log = lintSarif([broken, rejected], 'local', root);
    expect(sarifSchemaErrors(log)).toEqual([]);
    // The validator does reject what breaks the schema, so the check above can fail.
    const bad = structuredClone(log);
    (bad.runs[0]!.results![0] as { level: string }).level = 'fatal';
    expect(sarifSchemaErrors(bad)).toEqual(['/runs/0/results/0/level: must be equal to one of the allowed values']);
  });

  it('puts every finding at its file (relative to the root, URI-encoded) and its line and column', () => {
    const log = lintSarif([broken], 'local', root);
    const run = log.runs[0]!;
    const findings = broken.ok ? broken.report.findings : [];
    expect(run.results).toHaveLength(findings.length);
    run.results!.forEach((r, i) => {
      const f = findings[i]!;
      expect(r.ruleId).toBe(f.code);
      expect(r.message.text).toBe(f.message);
      expect(r.level).toBe({ error: 'error', warning: 'warning', info: 'note' }[f.severity]);
      expect(r.locations![0]!.physicalLocation).toEqual({
        artifactLocation: { uri: 'rules/broken%20rule.yml', uriBaseId: '%SRCROOT%' },
        region: { startLine: f.line, startColumn: f.column },
      });
    });
    expect(run.results!.map((r) => `${r.locations![0]!.physicalLocation!.region!.startLine}:${r.level}:${r.ruleId}`)).toEqual(
      expect.arrayContaining(['9:error:modifier-unknown', '10:error:condition-undefined-identifier']),
    );
    expect(run.originalUriBaseIds).toEqual({ '%SRCROOT%': { uri: pathToFileURL(root).href + '/' } });
    expect(run.automationDetails).toEqual({ id: 'detflow-lint/local/' });
  });

  it('describes each finding code once, and each result points at its descriptor', () => {
    const log = lintSarif([broken, broken], 'local', root);
    const rules = log.runs[0]!.tool.driver.rules!;
    const codes = rules.map((r) => r.id);
    expect(new Set(codes).size).toBe(codes.length);
    for (const r of log.runs[0]!.results!) expect(rules[r.ruleIndex!]!.id).toBe(r.ruleId);
    expect(rules.find((r) => r.id === 'modifier-unknown')).toMatchObject({
      defaultConfiguration: { level: 'error' },
      shortDescription: { text: 'Sigma lint: modifier unknown' },
    });
  });

  it('reports a file the service refused as an error on the file, without a region', () => {
    const [result] = lintSarif([rejected], 'local', root).runs[0]!.results!;
    expect(result).toMatchObject({ ruleId: REJECTED_RULE_ID, level: 'error', message: { text: rejected.ok ? '' : rejected.error } });
    expect(result!.locations![0]!.physicalLocation).toEqual({ artifactLocation: { uri: 'rules/huge.yml', uriBaseId: '%SRCROOT%' } });
  });

  it('omits the region where the engine knows no position, and uses an absolute URI outside the root', () => {
    const outside: FileLint = {
      file: path.join(os.tmpdir(), 'elsewhere.yml'),
      seconds: 0,
      ok: true,
      report: { ...(broken.ok ? broken.report : ({} as never)), findings: [{ code: 'x', severity: 'warning', message: 'somewhere', line: 0, column: 0 }] },
    };
    const log = lintSarif([outside], 'local', root);
    expect(log.runs[0]!.results![0]!.locations![0]!.physicalLocation).toEqual({ artifactLocation: { uri: pathToFileURL(outside.file).href } });
    expect(sarifSchemaErrors(log)).toEqual([]);
  });

  it('takes the git work tree around the working directory as the root', () => {
    const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-sarif-root-'));
    try {
      fs.mkdirSync(path.join(repo, '.git'));
      fs.mkdirSync(path.join(repo, 'detections/windows'), { recursive: true });
      expect(sarifRoot(path.join(repo, 'detections/windows'))).toBe(repo);
      fs.rmSync(path.join(repo, '.git'), { recursive: true });
      // No work tree anywhere above: the working directory itself.
      expect(sarifRoot(path.join(repo, 'detections'))).toBe(path.join(repo, 'detections'));
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
