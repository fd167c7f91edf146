import fs from 'node:fs';
import path from 'node:path';
import { UsageError } from './io';

/** The fixture strings sent to the service, each with where it came from (a file, or an element of one). */
export type FixtureSet = { dir: string; fixtures: string[]; origins: string[] };

/** By convention a rule's fixtures sit next to it: rules/x.yml → rules/x.fixtures/. */
export function defaultFixturesDir(ruleFile: string): string {
  return ruleFile.replace(/\.ya?ml$/i, '') + '.fixtures';
}

/**
 * Reads every *.json file of `dir`, sorted by name. A file holding a JSON array contributes one
 * fixture per element; any other file is sent as it is, so the service — the one validator of
 * fixture documents — reports what is wrong with it.
 */
export function readFixtureDir(dir: string): FixtureSet {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UsageError(`No fixtures directory ${dir}`);
  const files = fs
    .readdirSync(dir)
    .filter((name) => name.toLowerCase().endsWith('.json'))
    .sort();
  const set: FixtureSet = { dir, fixtures: [], origins: [] };
  for (const name of files) {
    const file = path.join(dir, name);
    const text = fs.readFileSync(file, 'utf8');
    const elements = arrayElements(text);
    if (elements === undefined) {
      set.fixtures.push(text);
      set.origins.push(file);
    } else {
      elements.forEach((doc, i) => {
        set.fixtures.push(JSON.stringify(doc));
        set.origins.push(`${file}[${i}]`);
      });
    }
  }
  if (set.fixtures.length === 0) throw new UsageError(`No *.json fixtures in ${dir}`);
  return set;
}

function arrayElements(text: string): unknown[] | undefined {
  try {
    const doc: unknown = JSON.parse(text);
    return Array.isArray(doc) ? doc : undefined;
  } catch {
    return undefined;
  }
}
