import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Request, Response } from 'express';
import { cliTarballName, packCli } from '../../cli/package/build';
import { CLI_VERSION } from '../../cli/version';
import { metricsRoute } from '../metrics/metrics';

/** Where a pipeline installs the CLI that matches this service: `npm install -g "$DETFLOW_URL/cli/detflow.tgz"`. */
export const CLI_TARBALL_PATH = '/cli/detflow.tgz';

export type CliTarball = { version: string; fileName: string; bytes: Buffer; etag: string };

let pending: Promise<CliTarball> | undefined;

async function buildTarball(): Promise<CliTarball> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-tgz-'));
  try {
    const bytes = fs.readFileSync(await packCli(dir));
    return { version: CLI_VERSION, fileName: cliTarballName(), bytes, etag: `"${crypto.createHash('sha256').update(bytes).digest('base64url')}"` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The tarball, built on the first request and kept in memory for the life of the process (the
 * sources it is built from do not change under a running service). Concurrent first requests share
 * one build; a failed build is not kept, so the next request tries again.
 */
export function cliTarball(): Promise<CliTarball> {
  pending ??= buildTarball().catch((err: unknown) => {
    pending = undefined;
    throw err;
  });
  return pending;
}

/**
 * GET (and HEAD) /cli/detflow.tgz: public like /healthz, since a CI job installs the CLI before it
 * has a token in hand, and the CLI holds no secret. The URL names no version, so caches revalidate
 * (no-cache) and the ETag spares them the download while the service's version is the same.
 */
export async function serveCliTarball(req: Request, res: Response): Promise<void> {
  metricsRoute(res, CLI_TARBALL_PATH);
  const tarball = await cliTarball();
  res.setHeader('ETag', tarball.etag);
  res.setHeader('Cache-Control', 'public, no-cache');
  res.setHeader('X-Detflow-Version', tarball.version);
  if (req.headers['if-none-match']?.split(/\s*,\s*/).includes(tarball.etag)) {
    res.status(304).end();
    return;
  }
  res.setHeader('Content-Type', 'application/gzip');
  res.setHeader('Content-Disposition', `attachment; filename="${tarball.fileName}"`);
  res.setHeader('Content-Length', String(tarball.bytes.length));
  res.status(200).end(tarball.bytes);
}
