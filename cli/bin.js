#!/usr/bin/env node
// The `detflow` command. The CLI is TypeScript run through tsx, like the service itself.
require('tsx/cjs');
require('./main.ts')
  .run(process.argv)
  .then((code) => {
    process.exitCode = code;
  });
