import * as v from 'valibot';
import { ENV } from '../facts/environment';
import { RequiredString } from '../runtime/config';
import { withLogsAndMetrics } from '../runtime/function-config';
import { LOGGER_CONFIG } from '../runtime/log-level';
import { CHECKED_FUNCTIONS, type CheckedFunction } from './pre-traffic-expectations';

/**
 * The configuration of the functions that check a deployed stage, read at cold start and checked at
 * synthesis (infra/config-refusal.ts), as shared/runtime/function-config.ts is for the API's functions.
 */

/** The entry points (functions/) of the functions that check a deployed stage, beside the API's own. */
export const CHECK_FUNCTION_HANDLERS = { preTrafficHook: 'pre-traffic-hook', syntheticProbe: 'synthetic-probe' } as const;

const FunctionNamesSchema = v.strictObject(
  Object.fromEntries(CHECKED_FUNCTIONS.map((fn) => [fn, RequiredString])) as Record<CheckedFunction, typeof RequiredString>,
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
