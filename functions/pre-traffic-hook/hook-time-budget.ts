import { FUNCTION_TIMEOUT_MS } from '../../shared/facts/time-budget';
import { CHECKED_FUNCTIONS, CHECKED_WITH_A_KEY, checksFor, type CheckedFunction } from './pre-traffic-expectations';

/**
 * The pre-traffic hook's time budget. CodeDeploy waits for the hook's report, not the hook, so every
 * call is bounded and the hook's timeout leaves room for all of them, the report last.
 */

/** Lambda's own limit on starting a new instance (INIT): a check of a cold version may wait through it first. */
export const LAMBDA_INIT_LIMIT_MS = 10_000;

/** How long a check waits for its answer: a cold start at its limit, the function's whole timeout, and the network. */
export const CHECK_ANSWER_LIMIT_MS = LAMBDA_INIT_LIMIT_MS + FUNCTION_TIMEOUT_MS + 5_000;

/** How long one CodeDeploy call may take, the SDK's retries included. */
export const CODEDEPLOY_CALL_LIMIT_MS = 10_000;

/** One attempt of a write to the keys table: DynamoDB answers a single-item write far sooner, so one still open is stuck. */
export const CHECK_KEY_ATTEMPT_TIMEOUT_MS = 1_000;
export const CHECK_KEY_MAX_ATTEMPTS = 3;

/** How long issuing or revoking the check key may take, every attempt and the SDK's backoff between them included. */
export const CHECK_KEY_CALL_LIMIT_MS = 5_000;

/** The hook's own start, before its first call. */
const HOOK_START_MS = 5_000;

/** The longest the checks of one function may take: each check at its limit, and issuing and revoking its key if it needs one. */
function checkingTimeMs(fn: CheckedFunction): number {
  const context = {
    runId: 'budget',
    unknownApiKey: 'budget',
    unknownPetId: 1,
    now: new Date(0),
    checkKey: { apiKey: 'budget', keyId: 'budget' },
  };
  const keyCalls = CHECKED_WITH_A_KEY.has(fn) ? 2 * CHECK_KEY_CALL_LIMIT_MS : 0;
  return checksFor(fn, context).length * CHECK_ANSWER_LIMIT_MS + keyCalls;
}

/**
 * The hook's timeout: its start, finding the deployment's target (list, then get), the checks of the
 * function that takes longest to check, and the report, each at its limit. A deployment moves one function.
 */
export function preTrafficHookTimeoutMs(): number {
  return HOOK_START_MS + 2 * CODEDEPLOY_CALL_LIMIT_MS + Math.max(...CHECKED_FUNCTIONS.map(checkingTimeMs)) + CODEDEPLOY_CALL_LIMIT_MS;
}
