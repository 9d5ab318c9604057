import { type ConfigSchema, configProblems, describeConfigProblem, type Environment } from '../shared/runtime/config';
import { API_FUNCTIONS, type ApiFunctionName } from '../shared/facts/function-names';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { ENV } from '../shared/facts/environment';
import { localStageVariables } from './dynamodb-local';
import { instanceEnvironment } from './functions';

/**
 * Every variable a function would refuse at cold start, one line each, checked before the local runtime
 * serves: otherwise every request to that function would answer 500.
 */
export function functionConfigProblems(environmentOf: (name: ApiFunctionName) => Environment): string[] {
  // A variable several functions refuse (a log level) is one line.
  const refusals = refusalsByFunction(environmentOf);
  return [...new Set([...refusals.values()].flat())];
}

/**
 * Each function the local runtime serves whose configuration (`config`, the schemas as the sources now are
 * under `npm run dev`) refuses the environment it gets, with one line per variable it refuses.
 */
export function refusalsByFunction(
  environmentOf: (name: ApiFunctionName) => Environment,
  config: Readonly<Record<ApiFunctionName, ConfigSchema>> = FUNCTION_CONFIG,
): Map<ApiFunctionName, string[]> {
  const refusals = new Map<ApiFunctionName, string[]>();
  for (const name of API_FUNCTIONS) {
    const problems = configProblems(config[name], environmentOf(name));
    if (problems.length > 0) refusals.set(name, problems.map(describeConfigProblem));
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

/**
 * A refusal for each variable set in the shell that the local stage replaces with its own value on every
 * function (table names, listing, metrics namespace): ignored, it would mislead. CURSOR_SECRET
 * is `npm start`'s own setting, and passes.
 */
export function shellSettingRefusals(env: Environment): string[] {
  return Object.keys(localStageVariables('unused'))
    .filter((name) => name !== ENV.cursorSecret && env[name] !== undefined && env[name] !== '')
    .map(
      (name) =>
        `${name} is set in the shell, but the local stage gives its functions a value of its own: to change it for a function, ` +
        'put it in an ENV_VARS file (docs/local-development.md, "Per-function environment: `ENV_VARS`").',
    );
}
