import { Token } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { configProblems, describeConfigProblem, type ConfigSchema } from '../shared/runtime/config';

/**
 * Fails synthesis when a function's environment breaks the configuration the function reads at cold
 * start (shared/runtime/function-config.ts, shared/checks/checks-config.ts): `cdk synth` names the function
 * (its construct path), the variable and the rule, rather than a deployed function failing every
 * request. Only literal values can be checked: a value CloudFormation resolves at deploy time (a
 * table name, a secret's dynamic reference, an ARN) is a token here, and its rule is left to the
 * function. A variable missing altogether is always refused.
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
