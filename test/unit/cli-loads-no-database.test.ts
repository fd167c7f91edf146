import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// `detflow` is an HTTP client plus the Sigma engine: starting it must not load the service's database layer or a
// database driver. This starts the real entry point (cli/bin.js, which loads cli/main.ts through tsx) with
// `--help`, so no command runs, and lists every module it loaded.

const root = path.join(__dirname, '../..');

/** Modules the CLI must not load, as paths relative to the repository (node_modules/… for packages). */
const DATABASE = [/^db\//, /^node_modules\/(?:drizzle-orm|pg|@electric-sql\/pglite)\//];

/** Every module `node cli/bin.js --help` loads: the files in require.cache when the process exits. */
function modulesLoadedByHelp(): string[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-modules-'));
  try {
    // tsx/cjs compiles the CLI's TypeScript to CommonJS, so everything it loads at start goes through require().
    const recorder = path.join(dir, 'record-modules.cjs');
    const list = path.join(dir, 'modules.json');
    fs.writeFileSync(recorder, `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(Object.keys(require.cache))));\n`);
    const help = execFileSync(process.execPath, ['--require', recorder, path.join(root, 'cli/bin.js'), '--help'], {
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
