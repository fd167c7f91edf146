import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestService, type TestService } from './harness';
import { installedCliBin } from './installed-cli';

export type CliEnv = Record<string, string | undefined>;

export type CliResult = {
  /** The exit code; -1 when the process was killed (by the timeout) or could not start. */
  code: number;
  stdout: string;
  stderr: string;
  /** stdout and stderr together, in the order they arrived, as a terminal would show them. */
  combined: string;
};

export type CliOptions = {
  /** The command's environment: PATH and HOME of this process, then these. */
  env: CliEnv;
  /** Its working directory; this process's when left out. */
  cwd?: string;
  /** It is killed after this long, so that a command still waiting cannot outlive the test. */
  timeoutMs?: number;
};

export type RunningCli = {
  exited: Promise<CliResult>;
  /** Resolves with the first match of `pattern` in stdout; fails if the process ends first. */
  output(pattern: RegExp): Promise<RegExpMatchArray>;
};

/**
 * The real binary in a child process, as CI runs it, left running: its output can be read while it
 * runs (as a CI job waiting for a reviewer prints the approval id), and its exit awaited afterwards.
 * Asynchronous on purpose: the service under test runs in the jest process and must keep answering
 * while the command waits for it.
 */
export function startCli(args: string[], { env, cwd, timeoutMs = 60_000 }: CliOptions): RunningCli {
  // The command installed from its tarball, as a CI job installs it, not the source tree.
  const child = spawn(process.execPath, [installedCliBin(), ...args], { cwd, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  let stdout = '';
  let stderr = '';
  let combined = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => ((stdout += c), (combined += c)));
  child.stderr.setEncoding('utf8').on('data', (c: string) => ((stderr += c), (combined += c)));
  const exited = new Promise<CliResult>((resolve) => {
    child.on('error', (err) => resolve({ code: -1, stdout, stderr: stderr + String(err), combined: combined + String(err) }));
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr, combined }));
  });
  const killer = setTimeout(() => child.kill(), timeoutMs);
  void exited.then(() => clearTimeout(killer));
  return {
    exited,
    async output(pattern: RegExp): Promise<RegExpMatchArray> {
      for (;;) {
        const m = pattern.exec(stdout);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before printing ${pattern}:\n${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

/** The real binary run to its end (see `startCli`). */
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).exited;
}

/** The environment that points the command at `svc`, signed in with `token` (the bootstrap admin's unless told). */
export function cliEnv(svc: TestService, token = svc.token): { DETFLOW_URL: string; DETFLOW_TOKEN: string } {
  return { DETFLOW_URL: svc.url, DETFLOW_TOKEN: token };
}

/** The service under test, a scratch folder for the command's files, and `cliEnv` of the service. */
export type CliTestBed = { svc: TestService; dir: string; env: { DETFLOW_URL: string; DETFLOW_TOKEN: string } };

/** Starts the service and makes the scratch folder (named from `folderPrefix`); `stopCliTestBed` undoes both. */
export async function startCliTestBed(folderPrefix: string): Promise<CliTestBed> {
  const svc = await startTestService();
  return { svc, dir: fs.mkdtempSync(path.join(os.tmpdir(), folderPrefix)), env: cliEnv(svc) };
}

export async function stopCliTestBed({ svc, dir }: Pick<CliTestBed, 'svc' | 'dir'>): Promise<void> {
  await svc.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
