import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { builtinModules } from 'node:module';
import { bundleCli } from '../../cli/package/build';
import { installedCliBin } from '../support/installed-cli';

// `detflow` is an HTTP client plus the Sigma engine: starting it must not load the service's database layer or a
// database driver. This starts the entry point of the source tree (cli/bin.js, which loads cli/main.ts through
// tsx) with `--help`, so no command runs, and lists every module it loaded; then it checks what the packaged
// command (one bundled file) is made of and loads.

const root = path.join(__dirname, '../..');

/** Modules the CLI must not load, as paths relative to the repository (node_modules/… for packages). */
const DATABASE = [/^db\//, /^node_modules\/(?:drizzle-orm|pg|@electric-sql\/pglite)\//];

/** Every module `node <bin> --help` loads: the files in require.cache when the process exits. */
function modulesLoadedByHelp(bin = path.join(root, 'cli/bin.js')): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-modules-'));
  try {
    // tsx/cjs compiles the CLI's TypeScript to CommonJS, so everything it loads at start goes through require().
    const recorder = path.join(dir, 'record-modules.cjs');
    const list = path.join(dir, 'modules.json');
    fs.writeFileSync(recorder, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require.cache))));\n`);
    const help = execFileSync(process.execPath, ['--require', recorder, bin, '--help'], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(help).toContain('Usage: detflow');
    const files = JSON.parse(fs.readFileSync(list, 'utf8')) as string[];
    // A symlinked node_modules resolves elsewhere: keep the node_modules/… part of such paths.
    return files.map((file) => (file.includes('/node_modules/') ? file.slice(file.lastIndexOf('/node_modules/') + 1) : path.relative(root, file)));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('the detflow CLI', () => {
  let loaded: string[];
  beforeAll(() => {
    loaded = modulesLoadedByHelp();
  });

  it('is loaded through cli/bin.js (sanity: the recorder sees the CLI)', () => {
    expect(loaded).toEqual(expect.arrayContaining(['cli/bin.js', 'cli/main.ts']));
    expect(loaded.some((file) => file.startsWith('node_modules/commander/'))).toBe(true);
  });

  it('loads neither db/ nor a database driver (drizzle-orm, pg, PGlite)', () => {
    const database = loaded.filter((file) => DATABASE.some((pattern) => pattern.test(file)));
    expect([
      ...new Set(
        database.map((file) =>
          file
            .split('/')
            .slice(0, file.startsWith('node_modules/@') ? 3 : 2)
            .join('/'),
        ),
      ),
    ]).toEqual([]);
  });
});

/** Code of the service the package must not carry: its layers, database drivers, Temporal, DuckDB, the HTTP server. */
const SERVICE = /^(?:(?:api|db|domain|activities|workflows|worker|siem|config)\/|node_modules\/(?:drizzle-orm|pg|@electric-sql|@temporalio|@duckdb|express|pino|zod)\/)/;

describe('the packaged detflow command', () => {
  it('bundles only the CLI, the Sigma engine, lib/ and commander, yaml and diff', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-bundle-'));
    try {
      const bundle = path.join(dir, 'detflow.js');
      const inputs = await bundleCli(bundle);
      expect(inputs).toEqual(expect.arrayContaining(['cli/main.ts', 'sigma/index.ts']));
      expect(inputs.filter((file) => SERVICE.test(file))).toEqual([]);
      const packages = new Set(inputs.filter((f) => f.startsWith('node_modules/')).map((f) => f.split('/')[1]));
      expect([...packages].sort()).toEqual(['commander', 'diff', 'yaml']);
      expect(inputs.filter((f) => !/^(?:cli|sigma|lib|node_modules)\/|^package\.json$/.test(f))).toEqual([]);
      // What the bundle still requires at run time: Node's own modules, and DuckDB for Parquet only (an optional peer).
      const required = [...fs.readFileSync(bundle, 'utf8').matchAll(/\brequire\("([^"]+)"\)|\bimport\("([^"]+)"\)/g)].map((m) => m[1] ?? m[2]!);
      const builtins = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));
      expect([...new Set(required.filter((m) => !builtins.has(m)))]).toEqual(['@duckdb/node-api']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('loads nothing but its own file when installed from the tarball', () => {
    const bin = fs.realpathSync(installedCliBin());
    const loaded = modulesLoadedByHelp(bin);
    // Besides the recorder this test preloads.
    expect(loaded.map((file) => path.basename(file)).filter((name) => name !== 'record-modules.cjs')).toEqual(['detflow.js']);
  });
});
