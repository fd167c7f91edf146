import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Location, Log, ReportingDescriptor, Result } from 'sarif';
import type { LintFinding } from '../sigma';
import type { FileLint } from './lint';

/** The rule id of a file the service refused to lint at all (too large, not a rule): no finding code applies. */
export const REJECTED_RULE_ID = 'rule-rejected';

const LEVEL = { error: 'error', warning: 'warning', info: 'note' } as const;

/**
 * The folder paths in the log are relative to: the git work tree around `cwd` (code scanning
 * matches a result to a file of the repository by that path), else `cwd` itself.
 */
export function sarifRoot(cwd: string): string {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(cwd);
  }
}

/** A file's location: relative to %SRCROOT% (the root) when inside it, else an absolute file URI. */
function artifactLocation(file: string, root: string): { uri: string; uriBaseId?: string } {
  const absolute = path.resolve(file);
  const relative = path.relative(root, absolute);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return { uri: pathToFileURL(absolute).href };
  return { uri: relative.split(path.sep).map(encodeURIComponent).join('/'), uriBaseId: '%SRCROOT%' };
}

function location(file: string, root: string, position?: Pick<LintFinding, 'line' | 'column'>): Location {
  // The engine reports 0:0 where it knows no position; SARIF lines and columns start at 1.
  const region = position && position.line >= 1 ? { startLine: position.line, ...(position.column >= 1 ? { startColumn: position.column } : {}) } : undefined;
  return { physicalLocation: { artifactLocation: artifactLocation(file, root), ...(region ? { region } : {}) } };
}

function descriptor(code: string, level: Result.level): ReportingDescriptor {
  const words = code.replace(/[_-]+/g, ' ');
  return {
    id: code,
    name: code,
    shortDescription: { text: code === REJECTED_RULE_ID ? 'The service refused the rule file' : `Sigma lint: ${words}` },
    defaultConfiguration: { level },
    properties: { tags: ['sigma', 'detection-rule'] },
  };
}

/**
 * The lint results as a SARIF 2.1.0 log, the format GitHub code scanning (and GitLab, Azure
 * DevOps, VS Code's SARIF viewer) turns into annotations on the lines of a pull request: one
 * reporting descriptor per finding code, one result per finding, at the finding's line and column.
 */
export function lintSarif(results: readonly FileLint[], target: string, root: string): Log {
  const rules: ReportingDescriptor[] = [];
  const index = new Map<string, number>();
  const ruleIndex = (code: string, level: Result.level) => {
    let i = index.get(code);
    if (i === undefined) {
      i = rules.push(descriptor(code, level)) - 1;
      index.set(code, i);
    }
    return i;
  };

  const out: Result[] = [];
  for (const r of results) {
    if (!r.ok) {
      out.push({ ruleId: REJECTED_RULE_ID, ruleIndex: ruleIndex(REJECTED_RULE_ID, 'error'), level: 'error', message: { text: r.error }, locations: [location(r.file, root)] });
      continue;
    }
    for (const f of r.report.findings) {
      const level = LEVEL[f.severity];
      out.push({ ruleId: f.code, ruleIndex: ruleIndex(f.code, level), level, message: { text: f.message }, locations: [location(r.file, root, f)] });
    }
  }

  return {
    $schema: 'https://json.schemastore.org/sarif-2.1.0.json',
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'detflow', rules } },
        // One category per target: two lint jobs (say local and splunk) then keep their own alerts.
        automationDetails: { id: `detflow-lint/${target}/` },
        originalUriBaseIds: { '%SRCROOT%': { uri: pathToFileURL(root).href.replace(/\/?$/, '/') } },
        // Positions come from the YAML parser, which counts UTF-16 code units like JavaScript strings.
        columnKind: 'utf16CodeUnits',
        results: out,
      },
    ],
  };
}
