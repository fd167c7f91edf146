import fs from 'node:fs';
import path from 'node:path';

/** Expands the paths given on the command line into rule files: directories are walked for .yml/.yaml. */
export function ruleFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const stat = fs.statSync(p);
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(p).sort()) walk(path.join(p, entry));
    } else if (/\.ya?ml$/i.test(p) || paths.includes(p)) {
      out.push(p);
    }
  };
  for (const p of paths) {
    if (!fs.existsSync(p)) throw new Error(`No such file or directory: ${p}`);
    walk(p);
  }
  return out;
}
