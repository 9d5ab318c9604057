import { FUNCTION_TIMEOUT_MS } from '../facts/time-budget';
import { CHECKED_FUNCTIONS, checksFor } from './pre-traffic-expectations';

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

/** The hook's own start, before its first call. */
const HOOK_START_MS = 5_000;

/** The most checks any one function gets: a deployment moves one function. */
export function mostChecksOfOneFunction(): number {
  const context = { runId: 'budget', unknownApiKey: 'budget', unknownPetId: 1, now: new Date(0) };
  return Math.max(...CHECKED_FUNCTIONS.map((fn) => checksFor(fn, context).length));
}

/**
 * The hook's timeout: its start, finding the deployment's target (list, then get), every check of
 * the function with the most, and the report, each at its limit.
 */
export function preTrafficHookTimeoutMs(): number {
  return HOOK_START_MS + 2 * CODEDEPLOY_CALL_LIMIT_MS + mostChecksOfOneFunction() * CHECK_ANSWER_LIMIT_MS + CODEDEPLOY_CALL_LIMIT_MS;
}
