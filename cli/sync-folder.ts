import crypto from 'node:crypto';
import fs from 'node:fs';
import { identityFieldOf, readRuleIdentity } from '../sigma/rule-identity';
import { findUnstorableText } from '../lib/storable-text';
import { UsageError } from './io';
import { ruleFiles } from './rule-files';

/** One rule file of the folder: the text as the registry would store it, keyed as the registry keys it. */
export type FolderRule = { file: string; ruleId: string; title: string; text: string; sha256: string };

export type FolderProblem = { file: string; error: string };

export type Folder = { rules: FolderRule[]; problems: FolderProblem[] };

/**
 * Reads every rule file under `dir`. The id is read with the registry's own function, so the id
 * (a correlation's, lower-cased) and the refusal of a file without one are the service's. A file
 * that cannot be read this way, or two files claiming one id, make the folder unusable as a source
 * of truth: each is a problem, and the caller applies nothing.
 */
export function readFolder(dir: string): Folder {
  if (!fs.existsSync(dir)) throw new UsageError(`No such directory: ${dir}`);
  // A single file cannot be the source of truth of a target: every rule missing from it would be deleted.
  if (!fs.statSync(dir).isDirectory()) throw new UsageError(`${dir} is not a directory: sync compares a whole folder of rules with a target`);
  const files = ruleFiles([dir]);
  // An empty folder (a wrong path, a checkout that failed) would plan to delete everything deployed.
  if (files.length === 0) throw new UsageError(`No .yml/.yaml rule files in ${dir}`);

  const rules: FolderRule[] = [];
  const problems: FolderProblem[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const read = readRuleIdentity(text);
    if (!read.ok) {
      problems.push({ file, error: `${read.title}: ${read.details.join('; ')}` });
      continue;
    }
    // The registry refuses text its columns cannot hold; so does the plan.
    const unstorable = findUnstorableText(read.identity);
    if (unstorable) {
      problems.push({ file, error: `The rule cannot be stored: its ${identityFieldOf(unstorable.pointer)} ${unstorable.reason}` });
      continue;
    }
    // The registry hashes the text it receives; the same hash here tells which stored version a file is.
    rules.push({ file, ruleId: read.identity.ruleId, title: read.identity.title, text, sha256: crypto.createHash('sha256').update(text).digest('hex') });
  }

  const byId = new Map<string, string[]>();
  for (const r of rules) byId.set(r.ruleId, [...(byId.get(r.ruleId) ?? []), r.file]);
  for (const [ruleId, same] of byId) {
    if (same.length > 1) for (const file of same) problems.push({ file, error: `rule id ${ruleId} is also in ${same.filter((f) => f !== file).join(', ')}` });
  }
  return { rules, problems };
}
