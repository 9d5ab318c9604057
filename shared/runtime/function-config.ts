import * as v from 'valibot';
import { ENV } from '../facts/environment';
import { LISTING_SHARDS } from '../facts/listing';
import { API_FUNCTIONS, type ApiFunctionName, type FunctionName } from '../facts/function-names';
import { OPERATION_VARIABLES } from '../facts/operation-routes';
import { OPERATION_IDS, type OperationId } from '../facts/routes';
import { RequiredString, type ConfigSchema } from './config';
import { LOGGER_CONFIG } from './log-level';
import { METRICS_CONFIG, METRICS_NAMESPACE_RULE } from './metrics';

/**
 * The configuration of each function, by its name: the one schema the function reads at cold start, the
 * local runtime checks before it serves and the stacks check at synthesis. Its variables are the whole of
 * the function's environment: infra/ sets exactly these (infra/api-functions.ts).
 */

/** The shortest key the pagination cursors may be signed with: a guessable key lets anyone forge a cursor. */
export const CURSOR_SECRET_MIN_LENGTH = 32;

const CursorSecret = v.pipe(
  v.string('is required'),
  v.minLength(CURSOR_SECRET_MIN_LENGTH, `must be at least ${CURSOR_SECRET_MIN_LENGTH} characters`),
);

/** An integer setting within its bounds, from the environment's text. */
function integerIn(min: number, max: number) {
  return v.pipe(
    v.string('is required'),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
}

const ListingShards = integerIn(LISTING_SHARDS.min, LISTING_SHARDS.max);

/** The configuration of a function that logs and publishes metrics and reads `entries` besides. */
export function withLogsAndMetrics<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  const variables = v.object({ ...LOGGER_CONFIG, ...METRICS_CONFIG, ...entries });
  // Sound: the rule reads only METRICS_CONFIG's variables, which every output of `variables` has.
  return v.pipe(variables, METRICS_NAMESPACE_RULE as unknown as v.GenericValidation<v.InferOutput<typeof variables>>);
}

/** Each function behind the API's deployed name, by its own, as JSON: what the deployment's checks and traffic may invoke, and nothing else. */
const DeployedNames = v.pipe(
  v.string('is required'),
  v.parseJson(undefined, () => 'must be JSON'),
  v.strictObject(Object.fromEntries(API_FUNCTIONS.map((name) => [name, RequiredString])) as Record<ApiFunctionName, typeof RequiredString>),
);

/** What an operation's function may read besides its logs' and metrics' settings, by role: each with its one schema. */
const OPERATION_VARIABLE_SCHEMAS = {
  petsTable: RequiredString,
  idempotencyTable: RequiredString,
  apiKeysTable: RequiredString,
  cursorSecret: CursorSecret,
  listingShards: ListingShards,
  writeShards: ListingShards,
} as const satisfies Partial<Record<keyof typeof ENV, v.GenericSchema>>;
export type OperationVariable = keyof typeof OPERATION_VARIABLE_SCHEMAS;

type VariablesOf<TOperation extends OperationId> = (typeof OPERATION_VARIABLES)[TOperation][number];

/** An operation's configuration: the variables its file states (shared/operations/), each under its name in ENV. */
function operationConfig<const TOperation extends OperationId>(operation: TOperation) {
  const entries = Object.fromEntries(
    OPERATION_VARIABLES[operation].map((variable) => [ENV[variable], OPERATION_VARIABLE_SCHEMAS[variable]]),
  ) as { [TVariable in VariablesOf<TOperation> as (typeof ENV)[TVariable]]: (typeof OPERATION_VARIABLE_SCHEMAS)[TVariable] };
  return withLogsAndMetrics(entries);
}

// Sound: one entry per operation, each made by operationConfig from that operation's own variables.
const OPERATION_CONFIG = Object.fromEntries(OPERATION_IDS.map((operation) => [operation, operationConfig(operation)])) as unknown as {
  readonly [TOperation in OperationId]: ReturnType<typeof operationConfig<TOperation>>;
};

export const FUNCTION_CONFIG = {
  ...OPERATION_CONFIG,
  routeNotFound: withLogsAndMetrics({}),
  authorizer: withLogsAndMetrics({ [ENV.apiKeysTable]: RequiredString }),
  // It logs and publishes no metric; it knows each checked function's name, the keys table it issues the authorizer's
  // check keys in, and the function it starts a passed version's deployment traffic with.
  preTrafficHook: v.object({
    ...LOGGER_CONFIG,
    [ENV.apiKeysTable]: RequiredString,
    [ENV.preTrafficTargets]: DeployedNames,
    [ENV.deploymentTrafficFunction]: RequiredString,
  }),
  // It sends requests to each function's `live` alias, by its deployed name, and counts the authorizer's refusals among the answers.
  deploymentTraffic: withLogsAndMetrics({ [ENV.preTrafficTargets]: DeployedNames }),
  // The stage's URL and the secret holding its API key.
  syntheticProbe: withLogsAndMetrics({ [ENV.probeBaseUrl]: RequiredString, [ENV.probeApiKeySecret]: RequiredString }),
} as const satisfies Record<FunctionName, ConfigSchema>;

/** The variables a function reads: the entries of its configuration schema, every other variable ignored. */
export function variablesOf(name: FunctionName): string[] {
  const schema: ConfigSchema = FUNCTION_CONFIG[name];
  // Every configuration is an object schema, alone or first in a pipe of rules across its variables.
  const object = ('pipe' in schema ? (schema.pipe as readonly unknown[])[0] : schema) as v.ObjectSchema<v.ObjectEntries, undefined>;
  return Object.keys(object.entries);
}
