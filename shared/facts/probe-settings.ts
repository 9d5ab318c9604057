/**
 * What the synthetic probe (functions/synthetic-probe/probe-run.ts) and its deployment (infra/scheduled-probe.ts)
 * agree on. Plain constants: infra/ reads them without loading the probe.
 */

/**
 * What the stack stores in the probe's key secret until an operator stores a key. Never change it:
 * CloudFormation would write the new text over every key operators stored.
 */
export const PROBE_KEY_PLACEHOLDER = 'not-configured: store an API key of this stage here (docs/operations.md, "Synthetic probe")';

/**
 * Time budget of one probe step. The API answers within it or has failed its clients: each function
 * times out after FUNCTION_TIMEOUT_MS, and a client waiting longer has given up on it.
 */
export const PROBE_STEP_TIMEOUT_MS = 10_000;

/** Time budget of reading the key: Secrets Manager answers far sooner, so an attempt still open is stuck. */
export const PROBE_KEY_ATTEMPT_TIMEOUT_MS = 2_000;
export const PROBE_KEY_MAX_ATTEMPTS = 2;

/**
 * The probe function's timeout: the key's budget and every step's, with room. A run cut short by it
 * publishes nothing, which the probe's alarm treats as a failure.
 */
export const PROBE_FUNCTION_TIMEOUT_MS = 60_000;
