import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { installedBin, packAndInstall } from '../support/installed-cli';

// `npm run pack:cli` makes a package a CI job can install from a file or URL, with no registry: one
// bundled file and no dependencies, so `npm install --offline` of the tarball into an empty folder works.

const root = path.join(__dirname, '../..');
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const EXAMPLE_RULE = path.join(root, 'examples/rules/schtasks_temp_payload.yml');

describe('the detflow package', () => {
  let dir: string;
  let tarball: string;
  /** Runs the installed command itself (through its shebang), with no service configured. */
  const detflow = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(installedBin(dir), args, { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, ...env } });

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-package-'));
    tarball = packAndInstall(dir);
  }, 60_000);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('is named detflow, at the service’s version, with a bin, an engine and no dependencies', () => {
    expect(path.basename(tarball)).toBe(`detflow-${version}.tgz`);
    const files = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(files).toEqual(['package/NOTICE', 'package/README.md', 'package/THIRD-PARTY-LICENSES', 'package/bin/detflow.js', 'package/package.json']);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/detflow/package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: 'detflow', version, bin: { detflow: 'bin/detflow.js' }, engines: { node: '>=20' }, license: 'Apache-2.0' });
    expect(manifest.dependencies).toBeUndefined();
    // Only what npm itself wrote besides the package: nothing else was installed.
    expect(fs.readdirSync(path.join(dir, 'node_modules')).sort()).toEqual(['.bin', '.package-lock.json', 'detflow']);
    const licenses = fs.readFileSync(path.join(dir, 'node_modules/detflow/THIRD-PARTY-LICENSES'), 'utf8');
    for (const bundled of ['commander', 'yaml', 'diff']) expect(licenses).toMatch(new RegExp(`^${bundled} \\d+\\.\\d+`, 'm'));
  });

  it('prints its version', () => {
    const res = detflow(['--version']);
    expect([res.status, res.stdout.trim()]).toEqual([0, version]);
  });

  it('lints offline: a clean rule passes, a broken one fails with its line', () => {
    const clean = detflow(['lint', '--offline', EXAMPLE_RULE, '--target-kind', 'local']);
    expect(clean.status).toBe(0);
    expect(clean.stdout).toContain('lint (offline-local): 1 file, 0 errors');
    const broken = path.join(dir, 'broken.yml');
    fs.writeFileSync(broken, fs.readFileSync(EXAMPLE_RULE, 'utf8').replace(/condition: .*/, 'condition: selection and missing'));
    const failed = detflow(['lint', '--offline', broken, '--target-kind', 'local']);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toMatch(/broken\.yml:\d+:\d+: error/);
  });

  it('says what to install for Parquet, whose reader (DuckDB) is an optional peer', () => {
    const parquet = path.join(dir, 'events.parquet');
    fs.writeFileSync(parquet, 'PAR1');
    // The file is read before anything is sent, so no service needs to listen there.
    const res = detflow(['ingest', parquet, '--target', 'local'], { DETFLOW_URL: 'http://127.0.0.1:9', DETFLOW_TOKEN: `dfw_${'a'.repeat(38)}` });
    expect(res.status).toBe(2);
    expect(res.stderr).toContain('npm install -g @duckdb/node-api');
  });
});
