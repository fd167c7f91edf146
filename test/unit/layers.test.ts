import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The layer rules of .dependency-cruiser.cjs, run the way `npm run depcheck` runs them (tools/depcheck.mjs)
// on small trees made here: one that breaks each rule once, one that uses everything the rules allow.

const root = path.join(__dirname, '../..');

type Violation = { type: string; from: string; to: string; rule: { name: string; severity: string } };
type Outcome = { code: number; violations: Violation[]; stderr: string };

/** Runs tools/depcheck.mjs in `cwd` with the given depcruise arguments; resolves with its exit code and output. */
function run(cwd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, 'tools/depcheck.mjs'), ...args], { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The violations depcheck finds in `cwd` (JSON report: its exit code is always 0). */
async function depcheck(cwd: string): Promise<Outcome> {
  const { code, stdout, stderr } = await run(cwd, ['--output-type', 'json']);
  try {
    const result = JSON.parse(stdout) as { summary: { violations: Violation[] } };
    return { code, violations: result.summary.violations, stderr };
  } catch {
    throw new Error(`depcheck printed no JSON (exit ${code}): ${stderr || stdout}`);
  }
}

/** Writes a source tree with its own package.json; node_modules is this repository's, so packages resolve. */
function tree(name: string, files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `detflow-layers-${name}-`));
  const manifest = {
    name: `layers-${name}`,
    private: true,
    dependencies: { '@temporalio/workflow': '*', '@temporalio/common': '*', 'drizzle-orm': '*', pg: '*', yaml: '*' },
    devDependencies: { '@temporalio/testing': '*' },
  };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest));
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { module: 'Node16', moduleResolution: 'Node16', strict: true } }));
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Everything the rules allow, once each. */
const CLEAN: Record<string, string> = {
  'workflows/contracts.ts': "import type { Thing } from '../activities/things';\nexport const WORKFLOW_ID = 'x';\nexport type T = Thing;\n",
  'domain/service.ts':
    "import type { Thing } from '../activities/things';\nimport { thing } from '../db/schema';\nimport { WORKFLOW_ID } from '../workflows/contracts';\nexport const t: Thing = thing;\nexport const id = WORKFLOW_ID;\n",
  'workflows/flow.ts':
    "import { proxyActivities } from '@temporalio/workflow';\nimport { ApplicationFailure } from '@temporalio/common';\nimport { WORKFLOW_ID } from './contracts';\n" +
    "import type { Thing } from '../activities/things';\nimport { type Row } from '../db/schema';\nimport { other } from './other';\n" +
    'export const flow = [proxyActivities, ApplicationFailure, WORKFLOW_ID, other];\nexport type X = Thing | Row;\n',
  'workflows/other.ts': 'export const other = 1;\n',
  'activities/things.ts':
    "import { adapter } from '../siem/adapters';\nimport { thing } from '../db/schema';\nexport type Thing = string;\nexport const things = [adapter, thing];\n",
  'siem/adapters.ts': "import { store } from './local/store';\nexport const adapter = store;\n",
  'siem/local/store.ts': "import { parse } from '../../sigma/parse';\nexport const store = parse;\n",
  'sigma/parse.ts': "import v8 from 'node:v8';\nimport { parse as yaml } from 'yaml';\nimport { helper } from './helper';\nexport const parse = [v8, yaml, helper];\n",
  'sigma/helper.ts': 'export const helper = 1;\n',
  'db/schema.ts': "import { pgTable } from 'drizzle-orm/pg-core';\nexport const thing = 'thing';\nexport type Row = typeof pgTable;\n",
  'db/client.ts':
    "import pg from 'pg';\nimport type { TestWorkflowEnvironment } from '@temporalio/testing';\nexport const client = pg;\nexport type Env = TestWorkflowEnvironment;\n",
  // A cycle with a type-only edge loads no module twice: not reported.
  'config/a.ts': "import type { B } from './b';\nexport type A = { b?: B };\nexport const a = 1;\n",
  'config/b.ts': "import { a } from './a';\nexport type B = number;\nexport const b = a;\n",
  'api/routes.ts': "import { client } from '../db/client';\nexport const routes = client;\n",
  'api/main.ts': "import { routes } from './routes';\nexport const main = routes;\n",
  'worker/start.ts': "import { routes } from '../api/routes';\nimport { things } from '../activities/things';\nexport const start = [routes, things];\n",
  'cli/bin.js': "require('./main.ts');\n",
  'cli/main.ts': "import { parse } from '../sigma/parse';\nimport { a } from '../config/a';\nimport { out } from './io';\nexport const main = [parse, a, out];\n",
  'cli/io.ts': 'export const out = 1;\n',
};

/** Each rule broken once (and nothing else broken). */
const BROKEN: Record<string, string> = {
  ...CLEAN,
  // workflows-are-deterministic: a Node built-in, db/ and an npm package other than Temporal's, as values.
  'workflows/flow.ts':
    "import fs from 'node:fs';\nimport { thing } from '../db/schema';\nimport { parse } from 'yaml';\nimport type { Thing } from '../activities/things';\nexport const flow = [fs, thing, parse];\nexport type X = Thing;\n",
  // contracts-import-only-the-sdk
  'workflows/contracts.ts': "import path from 'node:path';\nexport const WORKFLOW_ID = path.sep;\n",
  // lib-is-a-leaf
  'lib/text.ts': "import { a } from '../config/a';\nexport const text = a;\n",
  // siem-below-the-domain
  'siem/uses-db.ts': "import { thing } from '../db/schema';\nexport const s = thing;\n",
  // domain-not-to-outer-layers (a value from activities/) and domain-not-to-worker (even a type)
  'domain/service.ts': "import { things } from '../activities/things';\nimport type { Start } from '../worker/start';\nexport const t = things;\nexport type S = Start;\n",
  'worker/start.ts': "import { routes } from '../api/routes';\nexport const start = routes;\nexport type Start = typeof start;\n",
  // api-only-from-entry-points
  'worker/uses-api.ts': "import { routes } from '../api/routes';\nexport const w = routes;\n",
  // cli-is-an-http-client, and through it cli-never-loads-a-database-driver (cli/bin.js → … → pg)
  'cli/main.ts': "import { client } from '../db/client';\nexport const main = client;\n",
  // sigma-is-self-contained
  'sigma/helper.ts': "import { a } from '../config/a';\nexport const helper = a;\n",
  // activities-use-siem-adapters
  'activities/things.ts': "import { store } from '../siem/local/store';\nexport type Thing = string;\nexport const things = store;\n",
  // no-circular: a cycle of value imports
  'config/b.ts': "import { c } from './c';\nexport type B = number;\nexport const b = c;\n",
  'config/c.ts': "import { b } from './b';\nexport const c = () => b;\n",
  // not-to-dev-dep (a value import of a devDependency)
  'db/client.ts': "import pg from 'pg';\nimport { TestWorkflowEnvironment } from '@temporalio/testing';\nexport const client = [pg, TestWorkflowEnvironment];\n",
  // not-to-unlisted-package (long is only a dependency of a dependency) and not-to-unresolvable
  'db/schema.ts': "import Long from 'long';\nimport { gone } from './missing';\nexport const thing = [Long, gone];\nexport type Row = number;\n",
};

const outcomes: Record<'clean' | 'broken' | 'real', Promise<Outcome>> = {} as never;
/** The broken tree checked as `npm run depcheck` does, with the default (err) report. */
let brokenAsCi: Promise<{ code: number; stdout: string; stderr: string }>;
const dirs: string[] = [];

beforeAll(() => {
  const clean = tree('clean', CLEAN);
  const broken = tree('broken', BROKEN);
  dirs.push(clean, broken);
  // The three runs are independent: let them overlap.
  outcomes.clean = depcheck(clean);
  outcomes.broken = depcheck(broken);
  outcomes.real = depcheck(root);
  brokenAsCi = run(broken, []);
  // Keep a rejected promise from being reported before its test awaits it.
  for (const outcome of Object.values(outcomes)) outcome.catch(() => undefined);
});

afterAll(async () => {
  // A test filtered out with -t awaits nothing: let every run end before its tree goes.
  await Promise.allSettled([...Object.values(outcomes), brokenAsCi]);
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

const summary = (violations: Violation[]) => violations.map((v) => `${v.rule.severity} ${v.rule.name}: ${v.from} → ${v.to}`).sort();

describe('layer rules (.dependency-cruiser.cjs)', () => {
  it('a tree that only does what the rules allow passes', async () => {
    const outcome = await outcomes.clean;
    expect(summary(outcome.violations)).toEqual([]);
    expect(outcome.code).toBe(0);
  });

  it('reports each broken rule by name, from the importing module to the imported one', async () => {
    const { code, violations } = await outcomes.broken;
    const found = summary(violations);
    const expected = [
      'error workflows-are-deterministic: workflows/flow.ts → fs',
      'error workflows-are-deterministic: workflows/flow.ts → db/schema.ts',
      'error workflows-are-deterministic: workflows/flow.ts → node_modules/yaml/',
      'error contracts-import-only-the-sdk: workflows/contracts.ts → path',
      'error workflows-are-deterministic: workflows/contracts.ts → path',
      'error lib-is-a-leaf: lib/text.ts → config/a.ts',
      'error siem-below-the-domain: siem/uses-db.ts → db/schema.ts',
      'error domain-not-to-outer-layers: domain/service.ts → activities/things.ts',
      'error domain-not-to-worker: domain/service.ts → worker/start.ts',
      'error api-only-from-entry-points: worker/uses-api.ts → api/routes.ts',
      'error cli-is-an-http-client: cli/main.ts → db/client.ts',
      'error cli-never-loads-a-database-driver: cli/bin.js → node_modules/pg/',
      'error sigma-is-self-contained: sigma/helper.ts → config/a.ts',
      'error activities-use-siem-adapters: activities/things.ts → siem/local/store.ts',
      'error no-circular: config/',
      'error not-to-dev-dep: db/client.ts → node_modules/@temporalio/testing/',
      'error not-to-unlisted-package: db/schema.ts → node_modules/long/',
      'error not-to-unresolvable: db/schema.ts → ./missing',
    ];
    // Paths into node_modules are the real paths of this repository's packages: match on the part that matters.
    for (const line of expected) expect(found.filter((f) => f.replace(/ → .*?node_modules\//, ' → node_modules/').startsWith(line))).not.toEqual([]);
    // Nothing else is reported: the type-only imports, Temporal's packages, sigma's npm packages and Node built-ins are fine.
    const unexpected = found.filter((f) => !expected.some((line) => f.replace(/ → .*?node_modules\//, ' → node_modules/').startsWith(line)));
    expect(unexpected).toEqual([]);
    // The cycle is the value cycle b ↔ c, not the a ↔ b one that has a type-only edge.
    expect(new Set(violations.filter((v) => v.rule.name === 'no-circular').map((v) => [v.from, v.to].sort().join(' ')))).toEqual(new Set(['config/b.ts config/c.ts']));
    expect(code).toBe(0);
  });

  it('npm run depcheck fails with the number of errors (warnings do not count) and names each rule', async () => {
    const [{ violations }, asCi] = await Promise.all([outcomes.broken, brokenAsCi]);
    const errors = violations.filter((v) => v.rule.severity === 'error');
    expect(errors.length).toBeGreaterThan(10);
    expect(asCi.code).toBe(errors.length);
    for (const name of new Set(violations.map((v) => v.rule.name))) expect(asCi.stdout).toContain(` ${name}: `);
  });

  it('the source tree has no violations', async () => {
    const { code, violations } = await outcomes.real;
    expect(summary(violations).filter((line) => line.startsWith('error'))).toEqual([]);
    expect(code).toBe(0);
  });
});
