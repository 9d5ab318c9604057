/**
 * The `default` of a switch over a closed union (function names, kinds, statuses): it compiles only while every
 * member has its case, so adding a member fails the build at each switch that must say what to do with it.
 */
export function unhandled(value: never): never {
  throw new Error(`No case for ${JSON.stringify(value)}`);
}
