import { Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { configProblems, describeConfigProblem, type ConfigSchema } from '../shared/runtime/config';

/**
 * Fails synthesis when a function's environment breaks the configuration it reads at cold start, rather
 * than a deployed function failing every request. Only literal values can be checked: a token resolved
 * at deploy time is left to the function, though a missing variable is always refused.
 */
export function refuseInvalidConfig(fn: IConstruct, schema: ConfigSchema, environment: Readonly<Record<string, string>>): void {
  fn.node.addValidation({ validate: () => literalConfigProblems(schema, environment) });
}

/** What `schema` refuses of `environment`'s literal values, one line per variable. */
export function literalConfigProblems(schema: ConfigSchema, environment: Readonly<Record<string, string>>): string[] {
  const resolvedAtDeploy = new Set(Object.keys(environment).filter((name) => Token.isUnresolved(environment[name])));
  return configProblems(schema, environment)
    .filter((problem) => !resolvedAtDeploy.has(problem.variable))
    .map((problem) => `${describeConfigProblem(problem)} (the configuration the function reads at cold start)`);
}
