import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestService, type TestService } from '../support/harness';
import { cliTarball } from '../../api/cli-package/cli-tarball';

// A CI job installs the CLI that matches the service it talks to, from the service itself, before it
// has a token: `npm install -g "$DETFLOW_URL/cli/detflow.tgz"`.

const { version } = JSON.parse(fs.readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { version: string };

describe('GET /cli/detflow.tgz', () => {
  let svc: TestService;
  let dir: string;
  beforeAll(async () => {
    svc = await startTestService();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-cli-download-'));
  }, 120_000);
  afterAll(async () => {
    await svc.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the tarball of the service’s version without a token, with an ETag that spares a second download', async () => {
    // The first requests arrive together: they share one build and get the same bytes.
    const answers = await Promise.all([1, 2, 3].map(() => fetch(`${svc.url}/cli/detflow.tgz`)));
    const bodies = await Promise.all(answers.map(async (res) => Buffer.from(await res.arrayBuffer())));
    const [res] = answers;
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(bodies.map((b) => b.toString('base64'))).size).toBe(1);
    expect(res!.headers.get('content-type')).toBe('application/gzip');
    expect(res!.headers.get('content-disposition')).toBe(`attachment; filename="detflow-${version}.tgz"`);
    expect(res!.headers.get('x-detflow-version')).toBe(version);
    expect(res!.headers.get('cache-control')).toBe('public, no-cache');
    expect(Number(res!.headers.get('content-length'))).toBe(bodies[0]!.length);
    const etag = res!.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]{43}"$/);
    // gzip, holding the package's manifest at the service's version.
    expect(bodies[0]!.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    const file = path.join(dir, 'downloaded.tgz');
    fs.writeFileSync(file, bodies[0]!);
    expect(JSON.parse(execFileSync('tar', ['xzOf', file, 'package/package.json'], { encoding: 'utf8' }))).toMatchObject({ name: 'detflow', version });

    // Built once per process: later requests get the same tarball without building again.
    expect(cliTarball()).toBe(cliTarball());
    expect((await cliTarball()).bytes.equals(bodies[0]!)).toBe(true);

    const again = await fetch(`${svc.url}/cli/detflow.tgz`, { headers: { 'If-None-Match': etag } });
    expect([again.status, again.headers.get('etag'), (await again.arrayBuffer()).byteLength]).toEqual([304, etag, 0]);
    const head = await fetch(`${svc.url}/cli/detflow.tgz`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String(bodies[0]!.length)]);
  });

  it('installs with npm straight from the URL, and the installed command is the service’s version', async () => {
    const prefix = path.join(dir, 'install');
    // As the example pipelines do, with a scratch npm cache so nothing of it outlives the test; not
    // synchronously, since the service answering npm runs in this process.
    await promisify(execFile)('npm', ['install', '--no-audit', '--no-fund', '--cache', path.join(dir, 'npm-cache'), '--prefix', prefix, `${svc.url}/cli/detflow.tgz`], {
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    expect(execFileSync(path.join(prefix, 'node_modules/.bin/detflow'), ['--version'], { encoding: 'utf8' }).trim()).toBe(version);
  });
});
