import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** The console's sources (browser TypeScript) and where their build goes (gitignored). */
export const CONSOLE_SOURCE_DIR = path.resolve(__dirname, '../../console/src');
export const CONSOLE_BUILD_DIR = path.resolve(__dirname, '../../console/dist');

/** The files of the build, as the page links them. */
export const CONSOLE_ASSETS = ['app.js', 'app.css'] as const;

type Manifest = { sources: string; files: Record<string, { bytes: number; sha256: string }> };

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .sort();
}

/** A digest of every source file (names and contents) and of the UI library's version: a build of other sources is stale. */
function sourcesDigest(): string {
  const hash = crypto.createHash('sha256');
  for (const file of sourceFiles(CONSOLE_SOURCE_DIR)) hash.update(path.relative(CONSOLE_SOURCE_DIR, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  hash.update(require('preact/package.json').version as string);
  return hash.digest('hex');
}

function readManifest(): Manifest | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(CONSOLE_BUILD_DIR, 'manifest.json'), 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/**
 * Builds the console with esbuild (already the CLI bundle's builder) unless the build on disk is of
 * the current sources. The build is written to a fresh folder and renamed into place, so processes
 * starting together (test workers, an API and a worker) never serve a half-written one.
 */
export async function ensureConsoleBuilt(options: { force?: boolean; minify?: boolean } = {}): Promise<Manifest> {
  const digest = sourcesDigest();
  const current = readManifest();
  if (!options.force && current?.sources === digest && CONSOLE_ASSETS.every((f) => fs.existsSync(path.join(CONSOLE_BUILD_DIR, f)))) return current;
  const esbuild = await import('esbuild');
  const staging = `${CONSOLE_BUILD_DIR}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  await esbuild.build({
    entryPoints: { app: path.join(CONSOLE_SOURCE_DIR, 'main.tsx') },
    bundle: true,
    minify: options.minify ?? true,
    format: 'esm',
    target: ['es2022'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: staging,
    legalComments: 'none',
    logLevel: 'silent',
    tsconfig: path.join(CONSOLE_SOURCE_DIR, '../tsconfig.json'),
  });
  const files: Manifest['files'] = {};
  for (const name of CONSOLE_ASSETS) {
    const bytes = fs.readFileSync(path.join(staging, name));
    files[name] = { bytes: bytes.length, sha256: crypto.createHash('sha256').update(bytes).digest('hex') };
  }
  const manifest: Manifest = { sources: digest, files };
  fs.writeFileSync(path.join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2));
  const old = `${staging}.old`;
  try {
    fs.renameSync(CONSOLE_BUILD_DIR, old);
  } catch {
    // No build yet.
  }
  try {
    fs.renameSync(staging, CONSOLE_BUILD_DIR);
  } catch {
    // Another process put its build (of the same sources) in place first.
    fs.rmSync(staging, { recursive: true, force: true });
  }
  fs.rmSync(old, { recursive: true, force: true });
  return manifest;
}

if (require.main === module) {
  ensureConsoleBuilt({ force: true }).then(
    (m) =>
      console.log(
        `console built in ${CONSOLE_BUILD_DIR}: ${Object.entries(m.files)
          .map(([f, v]) => `${f} ${v.bytes} B`)
          .join(', ')}`,
      ),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
