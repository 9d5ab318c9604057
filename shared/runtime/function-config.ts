import * as v from 'valibot';
import { ENV } from '../facts/environment';
import { LIST_HEAD_CACHE_MS, LISTING_SHARDS } from '../facts/listing';
import { FUNCTION_NAMES, type authorizer, type FunctionName, type routeNotFoundHandler, type routes } from '../facts/routes';
import { RequiredString } from './config';
import { LOGGER_CONFIG } from './log-level';
import { METRICS_CONFIG, METRICS_NAMESPACE_RULE } from './metrics';

/**
 * The configuration of each function of the API, by handler file name: the one schema the function reads
 * at cold start, the local runtime checks before it serves and the stacks check at synthesis.
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

/** Each function the API deploys, by the base name of its file in functions/. */
export type FunctionHandler = (typeof routes)[number]['handler'] | typeof routeNotFoundHandler | (typeof authorizer)['handler'];

export const FUNCTION_CONFIG = {
  'list-pets': withLogsAndMetrics({
    [ENV.petsTable]: RequiredString,
    [ENV.cursorSecret]: CursorSecret,
    [ENV.listingShards]: ListingShards,
    [ENV.listHeadCacheMs]: integerIn(0, LIST_HEAD_CACHE_MS.max),
  }),
  'create-pet': withLogsAndMetrics({
    [ENV.petsTable]: RequiredString,
    [ENV.idempotencyTable]: RequiredString,
    [ENV.writeShards]: ListingShards,
  }),
  'get-pet': withLogsAndMetrics({ [ENV.petsTable]: RequiredString }),
  'route-not-found': withLogsAndMetrics({}),
  authorizer: withLogsAndMetrics({ [ENV.apiKeysTable]: RequiredString }),
} as const satisfies Record<FunctionHandler, unknown>;

/** The entry points (functions/) of the functions that check a deployed stage, beside the API's own. */
export const CHECK_FUNCTION_HANDLERS = { preTrafficHook: 'pre-traffic-hook', syntheticProbe: 'synthetic-probe' } as const;

const FunctionNamesSchema = v.strictObject(
  Object.fromEntries(FUNCTION_NAMES.map((fn) => [fn, RequiredString])) as Record<FunctionName, typeof RequiredString>,
);

/**
 * The pre-traffic hook (functions/pre-traffic-hook.ts): it logs, publishes no metric, knows each checked
 * function's name, and the keys table it issues the authorizer's check key in.
 */
export const PRE_TRAFFIC_HOOK_CONFIG = v.object({
  ...LOGGER_CONFIG,
  [ENV.apiKeysTable]: RequiredString,
  [ENV.preTrafficTargets]: v.pipe(
    v.string('is required'),
    v.parseJson(undefined, () => 'must be JSON'),
    FunctionNamesSchema,
  ),
});

/** The synthetic probe (functions/synthetic-probe.ts): the stage's URL and the secret holding its API key. */
export const SYNTHETIC_PROBE_CONFIG = withLogsAndMetrics({ [ENV.probeBaseUrl]: RequiredString, [ENV.probeApiKeySecret]: RequiredString });
