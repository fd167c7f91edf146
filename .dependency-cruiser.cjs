// Layer rules for the TypeScript sources (issue "One domain layer, enforced layers, and the habits
// that keep the code livable"). Run with `npm run depcheck` (tools/depcheck.mjs), which cruises the
// source folders that exist. test/, bench/, data/ and .tools/ are not cruised.
//
// Paths are relative to the folder depcruise runs in. Patterns for npm packages are not anchored
// at the start ((^|/)node_modules/) because a work tree's node_modules may be a symlink to another
// checkout's, and dependency-cruiser then reports the real path (../main/node_modules/...).
//
// Type-only imports (`import type`, or an import whose named bindings are all `type`, and
// `import('x').T` in type positions) are told apart from value imports by tsPreCompilationDeps:
// true. They are erased by the compiler, so they never load a module at run time:
//   - cycles made only possible by a type-only edge are not reported (a cycle counts only when
//     every edge of it is a value import);
//   - workflows/ may import types from anywhere;
//   - the other layer rules (api/, cli/, sigma/, siem/local/) count type-only imports too: they
//     are about which code a layer is written against, not only what it loads.
// An import that is written as a value import but only used as a type (`import { Db } ...` with
// Db used only in types) counts as a value import here; ESLint's consistent-type-imports makes
// such imports `import type`, so the two tools agree.

/** Imports that exist only for the type checker. */
const TYPE_ONLY = ['type-only', 'type-import'];
/** Process entry points: the only modules outside api/ that may import api/. */
const ENTRY_POINTS = ['^api/main[.]ts$', '^worker/start[.]ts$'];
/** Test code never ships, wherever it sits. */
const TEST_FILES = '[.](?:spec|test)[.](?:js|mjs|cjs|ts|mts|cts)$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'This import closes a cycle of value imports. Break it: move what both sides need into a third module (or into domain/), or turn one edge into an `import type`.',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: TYPE_ONLY } },
    },
    {
      name: 'api-only-from-entry-points',
      severity: 'error',
      comment:
        'Only process entry points (api/main.ts, worker/start.ts) and api/ itself ' + 'import api/. Move what the importer needs out of api/ (into domain/, db/ or config/).',
      from: { pathNot: ['^api/', ...ENTRY_POINTS] },
      to: { path: '^api/' },
    },
    {
      name: 'cli-is-an-http-client',
      severity: 'error',
      comment:
        'The CLI is an HTTP client plus the sigma/ engine: it imports cli/, sigma/, lib/, config/ and npm packages, ' +
        'never the service (db/, api/, activities/, workflows/, worker/, domain/, siem/).',
      from: { path: '^cli/' },
      to: { path: '^(?:db|api|activities|workflows|worker|domain|siem)/' },
    },
    {
      name: 'cli-never-loads-a-database-driver',
      severity: 'error',
      comment:
        'Through any chain of imports, the `detflow` command (cli/bin.js) reaches no database driver ' +
        '(drizzle-orm, pg, PGlite): the CLI must start without loading them. Each driver module reached is ' +
        'reported once, with one chain that reaches it. The chain may include type-only imports (reachability ' +
        'follows every edge), so this is stricter than what loads at run time; test/unit/cli-loads-no-database ' +
        'checks that.',
      from: { path: '^cli/bin[.]js$' },
      to: { path: '(?:^|/)node_modules/(?:drizzle-orm|pg|@electric-sql/pglite)/', reachable: true },
    },
    {
      name: 'workflows-are-deterministic',
      severity: 'error',
      comment:
        'Workflow code runs in the Temporal sandbox: it imports values only from workflows/, ' +
        '@temporalio/workflow and @temporalio/common (no Node built-ins, no domain/, db/ or activities/). `import type` ' +
        'from anywhere is fine.',
      from: { path: '^workflows/' },
      to: {
        pathNot: ['^workflows/', '(?:^|/)node_modules/@temporalio/(?:workflow|common)/'],
        dependencyTypesNot: TYPE_ONLY,
      },
    },
    {
      name: 'contracts-import-only-the-sdk',
      severity: 'error',
      comment:
        'workflows/contracts.ts (workflow type names and ids, search attributes, message names, failure types) is shared by ' +
        'the workflow sandbox and the service: the only value it imports is @temporalio/common (to define search attribute keys).',
      from: { path: '^workflows/contracts[.]ts$' },
      to: { pathNot: '(?:^|/)node_modules/@temporalio/common/', dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'lib-is-a-leaf',
      severity: 'error',
      comment: 'lib/ holds pure helpers every layer (the CLI included) may use: it imports nothing of this project.',
      from: { path: '^lib/' },
      to: { pathNot: ['^lib/', '(?:^|/)node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'siem-below-the-domain',
      severity: 'error',
      comment:
        'SIEM adapters are what the domain and activities call: they import sigma/, lib/, config/ and npm packages, ' +
        'never the layers above them (domain/, activities/, workflows/, api/, worker/) nor the records (db/).',
      from: { path: '^siem/' },
      to: { path: '^(?:domain|activities|workflows|api|worker|db)/' },
    },
    {
      name: 'sigma-is-self-contained',
      severity: 'error',
      comment: 'The Sigma engine is used by the CLI and the service alike: it imports only sigma/, npm packages and Node built-ins, nothing else of this project.',
      from: { path: '^sigma/' },
      to: { pathNot: ['^sigma/', '(?:^|/)node_modules/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'activities-use-siem-adapters',
      severity: 'error',
      comment: 'Activities reach a SIEM through its adapter (siem/adapter.ts, siem/adapters.ts, siem/index.ts), not through the local SIEM internals under siem/local/.',
      from: { path: '^activities/' },
      to: { path: '^siem/local/' },
    },
    {
      name: 'domain-not-to-outer-layers',
      severity: 'error',
      comment:
        "domain/ is the inner layer: it imports no value from api/, activities/ or workflows/, except the runs' contract " +
        '(workflows/contracts.ts: the names and ids it starts, queries and signals runs by; workflows/run-summaries.ts: ' +
        'what a run says of itself in the Temporal UI, which the domain gives the runs it starts).',
      from: { path: '^domain/' },
      to: { path: '^(?:api|activities|workflows)/', pathNot: '^workflows/(?:contracts|run-summaries)[.]ts$', dependencyTypesNot: TYPE_ONLY },
    },
    {
      name: 'domain-not-to-worker',
      severity: 'error',
      comment: 'domain/ is the inner layer: it does not import worker/ at all.',
      from: { path: '^domain/' },
      to: { path: '^worker/' },
    },
    {
      name: 'not-to-dev-dep',
      severity: 'error',
      comment: 'Source that ships depends on a devDependency, which `npm ci --omit=dev` does not install. Move the package to dependencies, or make the import `import type`.',
      from: { pathNot: TEST_FILES },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: TYPE_ONLY, pathNot: '(?:^|/)node_modules/@types/' },
    },
    {
      name: 'not-to-unlisted-package',
      severity: 'error',
      comment: 'An npm package that package.json does not list (it is only there as a dependency of a dependency).',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file and no package.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    // Look into npm packages only as far as their entry file: the rules are about our sources.
    doNotFollow: { path: '(?:^|/)node_modules/' },
    // Not cruised at all. node_modules is not excluded (that would drop the edges into packages, which
    // the workflow and devDependency rules look at), only not followed.
    exclude: { path: ['^(?:test|bench|data|[.]tools|dist|coverage)/', TEST_FILES] },
    // Keep type-only imports in the graph, marked 'type-only', so rules can tell them from values.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      // Resolve packages the way Node does (package.json "exports"), for both import and require.
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
