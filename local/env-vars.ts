import { readFile } from 'node:fs/promises';
import { API_FUNCTIONS, type ApiFunctionName } from '../shared/facts/function-names';
import { variablesOf } from '../shared/runtime/function-config';

/**
 * A file of per-function environment overrides, in the shape of SAM's `--env-vars`:
 * `{ "Parameters": { VAR: "value" }, "<function>": { VAR: "value" } }`. `Parameters` applies to every
 * function that reads the variable, a function's own entry to that function, over `Parameters`.
 * Functions go by their names, as invoke takes them (listPets, routeNotFound, authorizer, ...); a variable
 * must be one its function reads (its schema in shared/runtime/function-config.ts), so a typo is refused rather
 * than silently ignored. The values still pass the functions' own check before anything starts.
 */
export const EVERY_FUNCTION_KEY = 'Parameters';

/** The variables an ENV_VARS file lays over one function's environment, by its name. */
export type EnvironmentOverrides = (name: string) => Readonly<Record<string, string>> | undefined;

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
  const byName = new Map<ApiFunctionName, Record<string, string>>();
  const readByAny = new Set(API_FUNCTIONS.flatMap(variablesOf));
  for (const [key, variables] of Object.entries(parsed)) {
    const name = key === EVERY_FUNCTION_KEY ? undefined : apiFunctionNamed(key);
    if (key !== EVERY_FUNCTION_KEY && name === undefined) {
      problems.push(
        `${path}: unknown function "${key}"; the functions are ${API_FUNCTIONS.join(', ')} (or ${EVERY_FUNCTION_KEY}, for all)`,
      );
      continue;
    }
    if (!isPlainObject(variables)) {
      problems.push(`${path}: "${key}" must be an object of variables and their values, such as { "POWERTOOLS_LOG_LEVEL": "DEBUG" }`);
      continue;
    }
    const known = name === undefined ? readByAny : new Set(variablesOf(name));
    const values = name === undefined ? everyFunction : {};
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
    if (name !== undefined) byName.set(name, { ...byName.get(name), ...values });
  }
  if (problems.length > 0) throw new EnvVarsFileError(problems);

  return (key) => {
    const name = apiFunctionNamed(key);
    if (name === undefined) return undefined;
    const read = new Set(variablesOf(name));
    const shared = Object.fromEntries(Object.entries(everyFunction).filter(([variable]) => read.has(variable)));
    const own = byName.get(name);
    return own === undefined && Object.keys(shared).length === 0 ? undefined : { ...shared, ...own };
  };
}

/** The function the local runtime serves under this name, or undefined when none does. */
export function apiFunctionNamed(name: string): ApiFunctionName | undefined {
  return (API_FUNCTIONS as readonly string[]).includes(name) ? (name as ApiFunctionName) : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
