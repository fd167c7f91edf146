// Three projects: pure unit tests once, and the integration suite twice, once per database
// (PGlite embedded, PostgreSQL on 127.0.0.1:5432), because both are supported in production.
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022' } }] };
const common = { transform, testEnvironment: 'node', moduleFileExtensions: ['ts', 'js', 'json'] };
// Only projects that need Temporal start it: a unit-only run stays fast.
const temporal = {
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

module.exports = {
  maxWorkers: 2,
  testTimeout: 60_000,
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/sigma/**/*.test.ts', '<rootDir>/test/siem/**/*.test.ts', '<rootDir>/test/replay/**/*.test.ts'],
    },
    {
      ...common,
      ...temporal,
      displayName: 'pglite',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/db-pglite.ts'],
    },
    {
      ...common,
      ...temporal,
      displayName: 'postgres',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/db-postgres.ts'],
    },
    // Differential conformance of the Sigma engine against pySigma (installs it into .tools/).
    { ...common, displayName: 'conformance', testMatch: ['<rootDir>/test/conformance/**/*.test.ts'] },
    {
      ...common,
      ...temporal,
      displayName: 'contract',
      testMatch: ['<rootDir>/test/contract/**/*.test.ts'],
      setupFiles: ['<rootDir>/test/support/db-pglite.ts'],
    },
  ],
};
