// The entry point of the packaged `detflow` command: cli/bin.js without tsx, bundled by build.ts.
import { run } from '../main';

void run(process.argv).then((code) => {
  process.exitCode = code;
});
