import { join } from 'node:path';

/**
 * The repository's root folder, wherever it is checked out: the CDK app, the local runtime, the
 * tools and the tests resolve every path from it.
 */
export const PROJECT_ROOT = import.meta.dirname;

/** The code that ships, relative to a source root: every function is bundled from below it. */
export const SOURCE_DIR = 'src';

/** The folder, below a source root, of the Lambda entry points: one file per handler the route table names. */
export const HANDLERS_DIR = join(SOURCE_DIR, 'handlers');
