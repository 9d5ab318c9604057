import * as v from 'valibot';

/** A required, non-empty environment variable. */
export const RequiredString = v.pipe(v.string('is required'), v.trim(), v.nonEmpty('is required'));

/**
 * Reads and validates environment variables once, at cold start. A function deployed without the
 * configuration it needs fails on its first invocation with a message naming every bad variable,
 * instead of limping along with an empty table name.
 */
export function readConfig<const TEntries extends v.ObjectEntries>(
  entries: TEntries,
  env: Record<string, string | undefined> = process.env,
): v.InferOutput<v.ObjectSchema<TEntries, undefined>> {
  const result = v.safeParse(v.object(entries), env);
  if (!result.success) {
    const problems = result.issues.map((issue) => `${v.getDotPath(issue) ?? '(environment)'} ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  return result.output;
}
