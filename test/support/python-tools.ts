import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../worker/temporal-cli';

/**
 * Python tools the tests use, pinned and installed from PyPI into .tools/<name> on first use, so a
 * fresh clone needs nothing installed by hand.
 */
export function ensurePythonTool(name: string, requirements: string[], binary: string): { bin: string; env: NodeJS.ProcessEnv } {
  const dir = path.join(PROJECT_ROOT, '.tools', name);
  const stamp = path.join(dir, '.requirements');
  const wanted = requirements.join('\n');
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== wanted) {
    execFileSync('python3', ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-warn-script-location', '--upgrade', '--target', dir, ...requirements], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    fs.writeFileSync(stamp, wanted);
  }
  return { bin: path.join(dir, 'bin', binary), env: { ...process.env, PYTHONPATH: dir } };
}
