import { type ConfigSchema, configProblems, describeConfigProblem, type Environment } from '../shared/runtime/config';
import { FUNCTION_CONFIG, type FunctionHandler } from '../shared/runtime/function-config';
import { ENV } from '../shared/facts/environment';
import { localStageVariables } from './dynamodb-local';
import { instanceEnvironment } from './functions';

/**
 * Every variable a function would refuse at cold start, one line each, checked before the local runtime
 * serves: otherwise every request to that function would answer 500.
 */
export function functionConfigProblems(environmentOf: (handler: FunctionHandler) => Environment): string[] {
  // A variable several functions refuse (a log level) is one line.
  const refusals = refusalsByFunction((handler) => environmentOf(handler as FunctionHandler));
  return [...new Set([...refusals.values()].flat())];
}

/**
 * Each function whose configuration (`config`, the schemas as the sources now are under `npm run dev`)
 * refuses the environment it gets, with one line per variable it refuses.
 */
export function refusalsByFunction(
  environmentOf: (handler: string) => Environment,
  config: Readonly<Record<string, ConfigSchema>> = FUNCTION_CONFIG,
): Map<string, string[]> {
  const refusals = new Map<string, string[]>();
  for (const [handler, schema] of Object.entries(config)) {
    const problems = configProblems(schema, environmentOf(handler));
    if (problems.length > 0) refusals.set(handler, problems.map(describeConfigProblem));
  }
  return refusals;
}

/**
 * The environment a local function gets, but for its DynamoDB endpoint, which no configuration
 * rule reads: the stage's variables and the function's own, laid over `inherited` as the runtime lays them.
 */
export function localFunctionEnvironment(
  cursorSecret: string,
  overrides: Readonly<Record<string, string>> | undefined,
  inherited: Environment = process.env,
): Environment {
  return instanceEnvironment({ ...localStageVariables(cursorSecret), ...overrides }, inherited);
}

/** The variables a function reads: the entries of its configuration schema. */
export function configVariablesOf(handler: FunctionHandler): string[] {
  return Object.keys(FUNCTION_CONFIG[handler].pipe[0].entries);
}

/**
 * A refusal for each variable set in the shell that the local stage replaces with its own value on every
 * function (table names, listing, head cache, metrics namespace): ignored, it would mislead. CURSOR_SECRET
 * is `npm start`'s own setting, and passes.
 */
export function shellSettingRefusals(env: Environment): string[] {
  return Object.keys(localStageVariables('unused'))
    .filter((name) => name !== ENV.cursorSecret && env[name] !== undefined && env[name] !== '')
    .map(
      (name) =>
        `${name} is set in the shell, but the local stage gives its functions a value of its own: to change it for a function, ` +
        'put it in an ENV_VARS file (docs/local-development.md, "Per-function environment").',
    );
}
