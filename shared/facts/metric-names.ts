/**
 * The business metrics the stage publishes and the dashboard and alarms read: one list, so a renamed
 * metric cannot leave a graph silently empty. Plain constants, so infra/ need not load the runtime.
 */

/** CloudWatch namespace of a stage's metrics: one per stage, so staging never pollutes production's graphs. */
export function metricsNamespace(stageName: string): string {
  return `AnimalStore/${stageName}`;
}

export const METRICS = {
  /** A pet was stored (replays not counted). Unit: Count. */
  petsCreated: 'PetsCreated',
  /** A create with an Idempotency-Key was answered from its record instead of running again. Unit: Count. */
  idempotentReplays: 'IdempotentReplays',
  /**
   * The authorizer refused a request; dimension REFUSAL_REASON_DIMENSION says why, and no `service`. Counted
   * from the access log (infra/monitoring.ts), not by a function. Unit: Count.
   */
  authorizationsRefused: 'AuthorizationsRefused',
  /** One per function instance, at its first invocation, dimension `function_name`: the name Lambda tooling expects. Unit: Count. */
  coldStart: 'ColdStart',
  /**
   * An answer a deployment judges a version by (JUDGED_STATUSES), from a route function: dimension `status`, and
   * `version` (the function version that answered) beside an all-versions count, so an alarm can set one
   * version against the others (infra/version-alarms.ts). The authorizer's are counted from the access log. Unit: Count.
   */
  answers: 'Answers',
  /**
   * The authorizer's verdicts a deployment judges it by: a key refused (status 401) or not looked up (503), by
   * `status` and `version` and by `status` alone, no `service`: counted from the access log (infra/version-alarms.ts)
   * and, for the requests that reach it without API Gateway, by the deployment traffic. Unit: Count.
   */
  authorizerAnswers: 'AuthorizerAnswers',
} as const;

/**
 * The statuses whose rate a deployment compares between a function's new and old versions: a crash answered
 * (500), a dependency not answering (503), and the refusals a regression shows as (401, 404, 400). A success
 * writes nothing: Lambda counts every invocation per version, so the rate needs no line of ours.
 */
export const JUDGED_STATUSES = [500, 503, 401, 404, 400] as const;
export type JudgedStatus = (typeof JUDGED_STATUSES)[number];

/** Dimensions of `Answers`: the answer's status, and the version of the function that gave it. */
export const ANSWER_DIMENSIONS = { status: 'status', version: 'version' } as const;

/**
 * What the synthetic probe publishes (functions/synthetic-probe/probe-run.ts) and its alarm reads
 * (infra/scheduled-probe.ts): how the stage answers a client of its own, not what clients did.
 */
export const PROBE_METRICS = {
  /** 1 when every step passed, 0 when one failed or the key could not be read; none while no key is configured. Unit: None. */
  success: 'ProbeSuccess',
  /** How long the steps took together, in milliseconds, whether they passed or not. Unit: Milliseconds. */
  latency: 'ProbeLatency',
  /** A run found no API key in the probe's secret, so probed nothing. Unit: Count. */
  notConfigured: 'ProbeNotConfigured',
} as const;

/** Dimension of `AuthorizationsRefused`: the authorizer's verdict (`missing`, `invalid`, `unavailable`). */
export const REFUSAL_REASON_DIMENSION = 'reason';

/**
 * Dimensions every metric carries besides its own: shared/runtime/metrics.ts adds `service` (SERVICE_NAME in
 * shared/facts/service.ts); the dashboard must name the same set to find a metric.
 */
export const SERVICE_DIMENSION = 'service';
