/**
 * How a release reaches traffic (docs/operations.md, "How a release reaches traffic"): CodeDeploy's canary
 * gives the new version 10 % of each function's requests for 5 minutes, then all of them, and the bake holds
 * the deployment open while the same alarms watch the new version alone. Read by infra/ and by the
 * deployment traffic function, which keeps the new version judged throughout (functions/deployment-traffic/).
 */

/** The canary's share of each function's requests and its length: CodeDeployDefault.LambdaCanary10Percent5Minutes. */
export const CANARY_PERCENT = 10;
export const CANARY_MINUTES = 5;

/**
 * How long the deployment stays open after the shift to 100 %. A fault present from the shift breaches from
 * its first minute and fires on the second (2 of 3), and its metrics reach CloudWatch within about two more:
 * five minutes see it. Longer would hold every release longer for faults that slow, which the notifying
 * alarms still page.
 */
export const BAKE_MINUTES = 5;

/**
 * One request of the deployment's own every this many milliseconds, through the `live` alias: enough to meet every
 * rollback alarm's minimum at the canary's share (infra/version-alarms.ts refuses thresholds it would not meet).
 */
export const TRAFFIC_INTERVAL_MS = 250;

/** Lambda's longest timeout: one traffic run spans the canary and the bake within it. */
export const LAMBDA_MAX_TIMEOUT_MS = 15 * 60_000;
