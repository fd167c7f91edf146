// A named import: the bundler keeps only this field of package.json, not the service's dependency list.
import { version } from '../package.json';

/** The CLI's version: the service's, since the service serves the CLI that matches it (GET /cli/detflow.tgz). */
export const CLI_VERSION: string = version;
