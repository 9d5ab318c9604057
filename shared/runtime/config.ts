import * as v from 'valibot';

/** A required, non-empty environment variable. */
export const RequiredString = v.pipe(v.string('is required'), v.trim(), v.nonEmpty('is required'));

/** A function's environment, as Lambda and the local runtime give it. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * A function's configuration: the environment variables it reads, each with its rule (a valibot
 * object schema, piped through any rule that spans variables). One schema per function serves the
 * function at cold start, the local runtime before it serves, and the stacks at synthesis.
 */
export type ConfigSchema = v.GenericSchema<Environment, unknown>;

/** A variable a configuration refuses, and the rule it breaks: `CURSOR_SECRET`, `must be at least 32 characters`. */
export interface ConfigProblem {
  readonly variable: string;
  readonly rule: string;
}

/** Every variable `env` gives that `schema` refuses, with the rule, one entry per variable. */
export function configProblems(schema: ConfigSchema, env: Environment): ConfigProblem[] {
  const result = v.safeParse(schema, env);
  if (result.success) return [];
  const problems = new Map<string, ConfigProblem>();
  for (const issue of result.issues) {
    const [variable = '(environment)', ...within] = (v.getDotPath(issue) ?? '').split('.').filter(Boolean);
    // A key that is missing fails its object's rule, whose message names no rule of the variable's own.
    const rule = issue.received === 'undefined' ? 'is required' : issue.message;
    if (!problems.has(variable)) problems.set(variable, { variable, rule: within.length > 0 ? `${within.join('.')} ${rule}` : rule });
  }
  return [...problems.values()];
}

/** A problem as one line: the variable, then its rule. */
export function describeConfigProblem({ variable, rule }: ConfigProblem): string {
  return `${variable} ${rule}`;
}

/**
 * Reads and validates environment variables once, at cold start, so a misconfigured function fails at
 * once, naming every bad variable, instead of limping along with an empty table name.
 */
export function readConfig<const TSchema extends ConfigSchema>(schema: TSchema, env: Environment = process.env): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, env);
  if (!result.success) throw new Error(`Invalid configuration: ${configProblems(schema, env).map(describeConfigProblem).join('; ')}`);
  return result.output;
}
