// `npm run pack:cli [folder]`: writes the CLI's tarball (dist/cli/ unless told) and prints its path.
import path from 'node:path';
import { packCli } from './build';

packCli(process.argv[2] ?? path.join(__dirname, '../../dist/cli')).then(
  (file) => console.log(file),
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
