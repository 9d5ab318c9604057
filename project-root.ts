/**
 * The repository's root folder, wherever it is checked out: the CDK app, the local runtime, the
 * scripts, the bench and the tests resolve every path from it.
 */
export const PROJECT_ROOT = import.meta.dirname;
