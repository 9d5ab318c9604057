import { dynamoDbCallBudgetMs } from '../../shared/dynamodb/dynamodb-client';
import { CODEDEPLOY_CALL_LIMIT_MS, DIRECT_INVOCATION_LIMIT_MS } from '../../shared/facts/time-budget';
import { CHECK_KEY_SHAPES, CHECKED_WITH_A_KEY, checksFor, needsRevoking, type CheckKeys } from './pre-traffic-expectations';
import { API_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';

/**
 * The pre-traffic hook's time budget. CodeDeploy waits for the hook's report, not the hook, so every
 * call is bounded and the hook's timeout leaves room for all of them, the report and the traffic start last.
 */

/** How long a check waits for its answer: a direct invocation's limit. */
export const CHECK_ANSWER_LIMIT_MS = DIRECT_INVOCATION_LIMIT_MS;

/**
 * How long starting the deployment traffic may take: an asynchronous invocation, which Lambda answers
 * once it has queued the event, the SDK's retries included.
 */
export const TRAFFIC_START_LIMIT_MS = 10_000;

/**
 * How long issuing or revoking one check key may take: the keys table's document client (shared/dynamodb)
 * gives up by itself after every attempt and the backoff between them.
 */
export const CHECK_KEY_CALL_LIMIT_MS = dynamoDbCallBudgetMs();

/** The hook's own start, before its first call. */
export const HOOK_START_MS = 5_000;

/** The keys table calls of one run of the authorizer's checks: each key issued, and each that works revoked. */
const CHECK_KEY_CALLS = CHECK_KEY_SHAPES.length + CHECK_KEY_SHAPES.filter(needsRevoking).length;

/**
 * The longest the checks of one function may take: each check at its limit on the new version, and again
 * on the old one when the new one failed it, and issuing and revoking its keys if it needs them.
 */
function checkingTimeMs(fn: ApiFunctionName): number {
  const key = { apiKey: 'budget', keyId: 'budget' };
  const context = {
    runId: 'budget',
    unknownApiKey: 'budget',
    unknownPetId: 1,
    now: new Date(0),
    checkKeys: Object.fromEntries(CHECK_KEY_SHAPES.map((shape) => [shape, key])) as CheckKeys,
  };
  const keyCalls = CHECKED_WITH_A_KEY.has(fn) ? CHECK_KEY_CALLS * CHECK_KEY_CALL_LIMIT_MS : 0;
  return checksFor(fn, context).length * 2 * CHECK_ANSWER_LIMIT_MS + keyCalls;
}

/**
 * The hook's timeout: its start, finding the deployment's target (list, then get), the checks of the
 * function that takes longest to check, the report and starting the deployment traffic, each at its limit,
 * in the whole seconds Lambda takes. A deployment moves one function.
 */
export function preTrafficHookTimeoutMs(): number {
  const needed =
    HOOK_START_MS +
    2 * CODEDEPLOY_CALL_LIMIT_MS +
    Math.max(...API_FUNCTIONS.map(checkingTimeMs)) +
    CODEDEPLOY_CALL_LIMIT_MS +
    TRAFFIC_START_LIMIT_MS;
  return Math.ceil(needed / 1000) * 1000;
}
