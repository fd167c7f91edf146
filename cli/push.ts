import fs from 'node:fs';
import { isContentRejection, type ApiClient } from './api-client';
import { EXIT, type Io } from './io';

export type StoredVersion = { rule_id: string; version: number; created: boolean; title: string };

export type PushResult = { file: string; ok: true; stored: StoredVersion } | { file: string; ok: false; error: string };

/**
 * Stores one rule file as a new version (the same text again keeps its version). A rule the
 * service refuses is a result; an unusable service or token is thrown, since no other file would fare better.
 */
export async function pushRuleFile(client: ApiClient, file: string): Promise<PushResult> {
  try {
    const { body } = await client.request<StoredVersion>('POST', '/rules', { rule: fs.readFileSync(file, 'utf8') });
    return { file, ok: true, stored: body };
  } catch (err) {
    if (isContentRejection(err)) return { file, ok: false, error: err.message };
    throw err;
  }
}

export async function pushCommand(io: Io, client: ApiClient, files: string[], format: 'text' | 'json'): Promise<number> {
  const results: PushResult[] = [];
  for (const file of files) results.push(await pushRuleFile(client, file));
  if (format === 'json') {
    const json = results.map((r) => (r.ok ? { file: r.file, ok: true, ...r.stored } : r));
    io.out(JSON.stringify({ results: json }, null, 2) + '\n');
  } else {
    for (const r of results) {
      io.out(r.ok ? `${r.stored.created ? 'stored   ' : 'unchanged'} ${r.file} → ${r.stored.rule_id} v${r.stored.version}\n` : `failed    ${r.file}: ${r.error}\n`);
    }
  }
  return results.every((r) => r.ok) ? EXIT.ok : EXIT.failed;
}
