import fs from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ApiClient } from './api-client';
import { ruleFiles } from './rule-files';

type Io = { out: (s: string) => void; err: (s: string) => void; env: NodeJS.ProcessEnv };

type StoredVersion = { rule_id: string; version: number; created: boolean; title: string };

/** Builds the `detflow` program; `run` returns the exit code instead of exiting, so tests can call it. */
export function buildProgram(io: Io, setCode: (code: number) => void): Command {
  const program = new Command('detflow')
    .description('Detection rules as code: lint, test and deploy Sigma rules through detflow')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });

  program
    .command('push')
    .description('Store rule files in the registry as new versions (unchanged files keep their version)')
    .argument('<files...>', 'rule files or directories of .yml/.yaml files')
    .option('--format <format>', 'text or json', 'text')
    .action(async (paths: string[], options: { format: string }) => {
      const client = ApiClient.fromEnv(io.env);
      const results: Array<{ file: string; ok: boolean; rule_id?: string; version?: number; created?: boolean; error?: string }> = [];
      for (const file of ruleFiles(paths)) {
        try {
          const { body } = await client.request<StoredVersion>('POST', '/rules', { rule: fs.readFileSync(file, 'utf8') });
          results.push({ file, ok: true, rule_id: body.rule_id, version: body.version, created: body.created });
        } catch (err) {
          results.push({ file, ok: false, error: (err as Error).message });
        }
      }
      if (options.format === 'json') io.out(JSON.stringify({ results }, null, 2) + '\n');
      else {
        for (const r of results) {
          io.out(r.ok ? `${r.created ? 'stored   ' : 'unchanged'} ${r.file} → ${r.rule_id} v${r.version}\n` : `failed    ${r.file}: ${r.error}\n`);
        }
      }
      setCode(results.every((r) => r.ok) ? 0 : 1);
    });

  return program;
}

export async function run(argv: string[], io: Io = { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s), env: process.env }): Promise<number> {
  let code = 0;
  const program = buildProgram(io, (c) => (code = c));
  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    io.err(`detflow: ${(err as Error).message}\n`);
    return 2;
  }
}
