import { join } from 'node:path';

/**
 * The repository's root folder, wherever it is checked out: the CDK app, the local runtime, the
 * tools and the tests resolve every path from it. Never imported by a function: a bundle has no repository.
 */
export const PROJECT_ROOT = join(import.meta.dirname, '..', '..');

/** The folder of the Lambda entry points, relative to a source root: one file per function, each bundled from there. */
export const FUNCTIONS_DIR = 'functions';

/** The folder, relative to a source root, of what the functions share: together with FUNCTIONS_DIR, all the code that ships. */
export const SHARED_DIR = 'shared';
