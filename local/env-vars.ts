import { readFile } from 'node:fs/promises';
import { FUNCTION_CONFIG, type FunctionHandler } from '../shared/runtime/function-config';
import { configVariablesOf } from './config-check';
import { FUNCTION_NAMES, handlerNamed } from './function-names';

/**
 * A file of per-function environment overrides, in the shape of SAM's `--env-vars`:
 * `{ "Parameters": { VAR: "value" }, "<function>": { VAR: "value" } }`. `Parameters` applies to every
 * function that reads the variable, a function's own entry to that function, over `Parameters`.
 * Functions go by the names invoke takes (listPets, routeNotFound, authorize, ...); a variable must be
 * one its function reads (its schema in shared/runtime/function-config.ts), so a typo is refused rather
 * than silently ignored. The values still pass the functions' own check before anything starts.
 */
export const EVERY_FUNCTION_KEY = 'Parameters';

/** The variables an ENV_VARS file lays over one function's environment, by its handler file name. */
export type EnvironmentOverrides = (handler: string) => Readonly<Record<string, string>> | undefined;

/** What is wrong with the file, one line per problem, each naming the file. */
export class EnvVarsFileError extends Error {
  constructor(readonly lines: readonly string[]) {
    super(lines.join('\n'));
    this.name = 'EnvVarsFileError';
  }
}

/** Reads and checks an ENV_VARS file; rejects with EnvVarsFileError naming every problem. */
export async function readEnvVarsFile(path: string): Promise<EnvironmentOverrides> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    throw new EnvVarsFileError([`${path}: ${reason}`]);
  }
  return parseEnvVars(path, text);
}

/** The overrides `text` (the file at `path`) describes; throws EnvVarsFileError naming every problem. */
export function parseEnvVars(path: string, text: string): EnvironmentOverrides {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new EnvVarsFileError([`${path} is not JSON: ${(error as Error).message}`]);
  }
  const shape = `{ "${EVERY_FUNCTION_KEY}": { "VAR": "value" }, "listPets": { "VAR": "value" } }`;
  if (!isPlainObject(parsed)) throw new EnvVarsFileError([`${path} must be a JSON object such as ${shape}`]);

  const problems: string[] = [];
  const everyFunction: Record<string, string> = {};
  const byHandler = new Map<FunctionHandler, Record<string, string>>();
  const readByAny = new Set(FUNCTION_NAMES.flatMap((name) => configVariablesOf(handlerNamed(name)!)));
  for (const [key, variables] of Object.entries(parsed)) {
    const handler = key === EVERY_FUNCTION_KEY ? undefined : handlerNamed(key);
    if (key !== EVERY_FUNCTION_KEY && handler === undefined) {
      problems.push(
        `${path}: unknown function "${key}"; the functions are ${FUNCTION_NAMES.join(', ')} (or ${EVERY_FUNCTION_KEY}, for all)`,
      );
      continue;
    }
    if (!isPlainObject(variables)) {
      problems.push(`${path}: "${key}" must be an object of variables and their values, such as { "POWERTOOLS_LOG_LEVEL": "DEBUG" }`);
      continue;
    }
    const known = handler === undefined ? readByAny : new Set(configVariablesOf(handler));
    const values = handler === undefined ? everyFunction : {};
    for (const [variable, value] of Object.entries(variables)) {
      if (!known.has(variable)) {
        const subject =
          key === EVERY_FUNCTION_KEY
            ? `${key}.${variable} is read by no function; they read`
            : `${key} reads no variable ${variable}; it reads`;
        problems.push(`${path}: ${subject} ${[...known].sort().join(', ')}`);
      } else if (typeof value !== 'string') {
        problems.push(`${path}: ${key}.${variable} must be a string, got ${JSON.stringify(value)}`);
      } else {
        values[variable] = value;
      }
    }
    if (handler !== undefined) byHandler.set(handler, { ...byHandler.get(handler), ...values });
  }
  if (problems.length > 0) throw new EnvVarsFileError(problems);

  return (handler) => {
    if (!Object.hasOwn(FUNCTION_CONFIG, handler)) return undefined;
    const read = new Set(configVariablesOf(handler as FunctionHandler));
    const shared = Object.fromEntries(Object.entries(everyFunction).filter(([variable]) => read.has(variable)));
    const own = byHandler.get(handler as FunctionHandler);
    return own === undefined && Object.keys(shared).length === 0 ? undefined : { ...shared, ...own };
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
