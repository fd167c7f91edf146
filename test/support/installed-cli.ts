import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The `detflow` command as a CI job has it: packed with `npm run pack:cli` and installed from the
 * tarball with npm. Built once per change of the sources: the install sits in a shared temporary
 * folder named by a hash of what goes into the package, so the jest projects and workers of a run
 * (and the next runs) share it, and a lock folder makes the first of them build it while the others
 * wait.
 */

const root = path.join(__dirname, '../..');
/** What the package is built from: a change to any of them builds it again. */
const SOURCES = ['cli', 'sigma', 'lib', 'package.json', 'NOTICE'];
/** A lock older than this was left by a process that died while building. */
const STALE_LOCK_MS = 180_000;

function filesUnder(entry: string): string[] {
  const full = path.join(root, entry);
  if (!fs.statSync(full).isDirectory()) return [entry];
  return fs
    .readdirSync(full)
    .sort()
    .flatMap((name) => filesUnder(path.join(entry, name)));
}

function sourcesHash(): string {
  // The checkout too: its node_modules is linked into the install (see below).
  const hash = crypto.createHash('sha256').update(root);
  for (const file of SOURCES.flatMap(filesUnder))
    hash
      .update(`${file}\0`)
      .update(fs.readFileSync(path.join(root, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Runs a command of the build without jest's NODE_OPTIONS (vm modules), as a user's shell would. */
function run(file: string, args: string[], cwd: string): void {
  execFileSync(file, args, { cwd, stdio: 'pipe', env: { ...process.env, NODE_OPTIONS: '' } });
}

/** Packs the CLI into `dir` and installs the tarball there with npm, offline; returns the tarball. */
export function packAndInstall(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  run(path.join(root, 'node_modules/.bin/tsx'), [path.join(root, 'cli/package/pack.ts'), dir], root);
  const tarball = path.join(
    dir,
    fs.readdirSync(dir).find((f) => f.endsWith('.tgz'))!,
  );
  run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', dir, tarball], dir);
  return tarball;
}

/** The installed command in `dir` (npm's link to the package's bin). */
export const installedBin = (dir: string) => path.join(dir, 'node_modules/.bin/detflow');

let cached: string | undefined;

/** The path of the installed `detflow` (a JavaScript file with a shebang); builds it on first use. */
export function installedCliBin(): string {
  if (cached) return cached;
  const base = path.join(os.tmpdir(), 'detflow-cli-installed', sourcesHash());
  const done = path.join(base, 'done');
  const lock = `${base}.lock`;
  fs.mkdirSync(path.dirname(base), { recursive: true });
  while (!fs.existsSync(done)) {
    try {
      fs.mkdirSync(lock);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const held = fs.statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > STALE_LOCK_MS) fs.rmSync(lock, { recursive: true, force: true });
      else sleep(200);
      continue;
    }
    try {
      if (fs.existsSync(done)) break;
      fs.rmSync(base, { recursive: true, force: true });
      packAndInstall(base);
      // Parquet ingest needs DuckDB, the package's optional peer: installed beside it, as a user would.
      fs.symlinkSync(path.join(root, 'node_modules/@duckdb'), path.join(base, 'node_modules/@duckdb'), 'dir');
      fs.writeFileSync(done, '');
    } finally {
      fs.rmSync(lock, { recursive: true, force: true });
    }
  }
  cached = installedBin(base);
  return cached;
}
