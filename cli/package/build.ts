import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { CLI_VERSION } from '../version';

/**
 * The `detflow` command as its own npm package: one bundled file (the CLI, the Sigma engine and the
 * three npm packages they use), so the package has no dependencies and installs without a registry
 * (docs/decisions: the installable CLI).
 */
export const CLI_PACKAGE_NAME = 'detflow';

const root = path.join(__dirname, '../..');
/** The packages the bundle carries: their licenses travel with it. */
const BUNDLED_PACKAGES = ['commander', 'yaml', 'diff'];
const DUCKDB = '@duckdb/node-api';

/** The tarball's file name, as `npm pack` names it. */
export const cliTarballName = (version = CLI_VERSION) => `${CLI_PACKAGE_NAME}-${version}.tgz`;

/**
 * Bundles cli/package/entry.ts into one CommonJS file that Node runs directly (a shebang, no tsx);
 * returns the files bundled, relative to the repository (node_modules/… for packages).
 */
export async function bundleCli(outfile: string): Promise<string[]> {
  const { metafile } = await build({
    metafile: true,
    entryPoints: [path.join(root, 'cli/package/entry.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    logLevel: 'silent',
    // Parquet ingest only, loaded on demand: an optional peer rather than a native library in every install.
    external: [DUCKDB],
  });
  fs.chmodSync(outfile, 0o755);
  return Object.keys(metafile.inputs);
}

function packageManifest() {
  return {
    name: CLI_PACKAGE_NAME,
    version: CLI_VERSION,
    description: 'The detflow command: lint, test, replay and deploy Sigma rules through a detflow service',
    license: 'Apache-2.0',
    bin: { detflow: 'bin/detflow.js' },
    engines: { node: '>=20' },
    peerDependencies: { [DUCKDB]: packageVersion(DUCKDB) },
    peerDependenciesMeta: { [DUCKDB]: { optional: true } },
    files: ['bin', 'README.md', 'NOTICE', 'THIRD-PARTY-LICENSES'],
  };
}

const packageDir = (name: string) => path.join(root, 'node_modules', name);
const packageVersion = (name: string) => (JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')) as { version: string }).version;

function thirdPartyLicenses(): string {
  return BUNDLED_PACKAGES.map((name) => {
    const dir = packageDir(name);
    const version = packageVersion(name);
    const license = fs.readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
    if (!license) throw new Error(`${name} has no license file to ship with the bundle`);
    return `${'-'.repeat(80)}\n${name} ${version}\n${'-'.repeat(80)}\n${fs.readFileSync(path.join(dir, license), 'utf8').trim()}\n`;
  }).join('\n');
}

/** Writes the package's files (bundle, package.json, README, notices) into `dir`. */
export async function stageCliPackage(dir: string): Promise<void> {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  await bundleCli(path.join(dir, 'bin/detflow.js'));
  fs.writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(packageManifest(), null, 2)}\n`);
  fs.copyFileSync(path.join(root, 'cli/package/README.md'), path.join(dir, 'README.md'));
  fs.copyFileSync(path.join(root, 'NOTICE'), path.join(dir, 'NOTICE'));
  fs.writeFileSync(path.join(dir, 'THIRD-PARTY-LICENSES'), `The detflow command bundles these packages:\n\n${thirdPartyLicenses()}`);
}

/**
 * Stages the package in a scratch folder and runs `npm pack` there (the npm that installs it makes
 * it, so the tarball is what npm expects); returns the tarball's path in `destDir`.
 */
export async function packCli(destDir: string): Promise<string> {
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-stage-'));
  try {
    await stageCliPackage(staging);
    fs.mkdirSync(destDir, { recursive: true });
    await promisify(execFile)('npm', ['pack', '--pack-destination', path.resolve(destDir), '--ignore-scripts', '--silent', '--offline'], {
      cwd: staging,
      // npm pack of a local folder needs no registry; never let a CI's npm config send it to one.
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    return path.join(path.resolve(destDir), cliTarballName());
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}
