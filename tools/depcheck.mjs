#!/usr/bin/env node
// `npm run depcheck`: checks the layer rules of .dependency-cruiser.cjs on the source folders.
// Folders that do not exist (yet: domain/) are left out, since depcruise fails on a missing one.
// Runs in the current folder, so a test can point it at a fixture tree; further arguments are passed
// to depcruise (e.g. `--output-type json`). Exits with depcruise's code: the number of errors.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const SOURCE_FOLDERS = ['api', 'activities', 'workflows', 'worker', 'siem', 'sigma', 'db', 'cli', 'config', 'domain', 'lib'];

const config = fileURLToPath(new URL('../.dependency-cruiser.cjs', import.meta.url));
// The package exports only its API (src/main/index.mjs); its CLI sits at bin/ beside src/.
const depcruise = fileURLToPath(new URL('../../bin/dependency-cruise.mjs', import.meta.resolve('dependency-cruiser')));

const folders = SOURCE_FOLDERS.filter((folder) => existsSync(folder));
if (folders.length === 0) {
  console.error(`depcheck: none of ${SOURCE_FOLDERS.join(', ')} is in ${process.cwd()}`);
  process.exit(2);
}
const result = spawnSync(process.execPath, [depcruise, '--config', config, ...process.argv.slice(2), ...folders], {
  stdio: 'inherit',
});
if (result.error) throw result.error;
process.exit(result.status ?? 1);
