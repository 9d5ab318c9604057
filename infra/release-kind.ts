/**
 * Whether a stage runs an emergency release (every function all at once, no alarm rolling a deployment
 * back) or an ordinary one, as its stack's output of this name says: the operator tools read it there.
 */
export const RELEASE_KIND_OUTPUT = 'ReleaseKind';

export type ReleaseKind = 'emergency' | 'ordinary';

/** How a stage leaves an emergency release without a function moving while the alarms are off; said wherever it shows. */
export const WAY_BACK =
  'deploy the same commit as an ordinary release (npm run release) once the alarms have cleared, then later releases as usual ' +
  '(docs/operations.md, "While an alarm is in ALARM")';
