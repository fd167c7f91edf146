import path from 'node:path';
import { bundleWorkflowCode, type BundleOptions } from '@temporalio/worker';
import { WORKFLOWS_PATH } from '../../worker/create-worker';

// The worker bundles workflows/ with webpack into the Temporal sandbox. Whatever the bundle holds runs inside
// every workflow task: it must be workflow code (workflows/contracts.ts included) and Temporal's own
// workflow libraries, never the service (a database driver, an activity, a SIEM, the Sigma engine).

const root = path.join(__dirname, '../..');

/** npm packages that @temporalio/workflow and @temporalio/common bring into the bundle themselves (as of 1.24). */
const TEMPORAL_DEPENDENCIES = ['long', 'ms', 'nexus-rpc'];

/** Never in a workflow bundle. */
const FORBIDDEN = [
  /^(db|activities|siem|sigma|api|worker|cli|config)\//,
  /node_modules\/(drizzle-orm|pg|pg-[^/]+|@electric-sql\/pglite|@duckdb\/[^/]+|pino|express|yaml|zod)\//,
];

type Webpack = Parameters<NonNullable<BundleOptions['webpackConfigHook']>>[0];
type Compilation = { modules: Iterable<{ resource?: string }> };
type Compiler = { hooks: { afterCompile: { tap(name: string, hook: (compilation: Compilation) => void): void } } };

const silentLogger = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Bundles the workflows the way the worker does, recording the file of every module webpack puts in. */
async function bundledModules(): Promise<string[]> {
  const resources = new Set<string>();
  const recorder = {
    apply(compiler: Compiler) {
      compiler.hooks.afterCompile.tap('record-bundled-modules', (compilation) => {
        for (const module of compilation.modules) if (module.resource) resources.add(module.resource.split('?')[0]!);
      });
    },
  };
  await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: silentLogger,
    webpackConfigHook: (config: Webpack) => ({ ...config, plugins: [...(config.plugins ?? []), recorder as never] }),
  });
  // Relative to the repository; a symlinked node_modules resolves elsewhere, so keep the node_modules/… part.
  return [...resources].map((file) => (file.includes('/node_modules/') ? file.slice(file.lastIndexOf('/node_modules/') + 1) : path.relative(root, file))).sort();
}

/** The npm package a bundled file belongs to, or undefined for this repository's own files. */
function packageOf(file: string): string | undefined {
  const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match?.[1];
}

describe('workflow bundle', () => {
  let modules: string[];
  beforeAll(async () => {
    modules = await bundledModules();
  });

  it('holds the workflows and Temporal workflow libraries (sanity: the recorder sees the bundle)', () => {
    expect(modules).toContain('workflows/index.ts');
    expect(modules.filter((m) => m.startsWith('workflows/')).length).toBeGreaterThan(3);
    expect(modules.some((m) => m.startsWith('node_modules/@temporalio/workflow/'))).toBe(true);
  });

  it('holds only workflow code and the packages Temporal brings along', () => {
    const own = modules.filter((m) => packageOf(m) === undefined);
    expect(own.filter((m) => !m.startsWith('workflows/'))).toEqual([]);
    const packages = [...new Set(modules.map(packageOf).filter((p): p is string => p !== undefined))];
    expect(packages.filter((p) => !p.startsWith('@temporalio/') && !TEMPORAL_DEPENDENCIES.includes(p))).toEqual([]);
  });

  it('holds nothing of the service: no database driver, activity, SIEM or Sigma engine', () => {
    expect(modules.filter((m) => FORBIDDEN.some((pattern) => pattern.test(m)))).toEqual([]);
  });
});
