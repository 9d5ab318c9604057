import { FUNCTION_NAMES, type FunctionName } from '../../shared/facts/function-names';

/**
 * `name`, which no function has: the example a test refuses as an unknown function. Naming a function so
 * fails to compile here, and at run time, so the example never quietly becomes a function the test invokes.
 */
export function ensureNoFunctionNamed<const TName extends string>(name: TName & (TName extends FunctionName ? never : unknown)): TName {
  if ((FUNCTION_NAMES as readonly string[]).includes(name)) throw new Error(`${name} is a function: pick a name no function has`);
  return name;
}
