import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { METRICS, REFUSAL_REASON_DIMENSION } from './metric-names';
import { SERVICE_NAME } from './service';

/**
 * The business metrics, published with Powertools Metrics as CloudWatch embedded metric format
 * (EMF) lines on stdout: CloudWatch turns them into metrics from the function's log, with no API call
 * on the request path and no permission beyond writing logs. The namespace is the stage's
 * (POWERTOOLS_METRICS_NAMESPACE, set by infra/ and by the local runtime); POWERTOOLS_METRICS_DISABLED
 * turns them off (the unit tests do).
 *
 * Each metric is its own EMF line, published at once: a request counts one thing at most besides a
 * cold start, so there is nothing to batch and nothing to flush or lose when an invocation fails,
 * and the `reason` dimension of a refusal never leaks onto another metric. Each line carries the
 * request id as metadata, so a metric can be traced to its request's logs.
 *
 * One publisher per metric and dimension values, made once per instance, rather than Powertools'
 * `singleMetric()`, which publishes the same line but builds a new Metrics object, reading its whole
 * configuration from the environment again, on every call: measured at about 100 µs of CPU per
 * request, the largest part of what a warm createPet spent above its floor (`npm run bench`).
 */
const publishers = new Map<string, Metrics>();

function count(metricName: string, requestId: string, dimensions: Record<string, string> = {}): void {
  const key = JSON.stringify([metricName, dimensions]);
  let publisher = publishers.get(key);
  if (publisher === undefined) {
    publisher = new Metrics({ serviceName: SERVICE_NAME, defaultDimensions: dimensions });
    publishers.set(key, publisher);
  }
  publisher.addMetadata('requestId', requestId);
  publisher.addMetric(metricName, MetricUnit.Count, 1);
  publisher.publishStoredMetrics();
}

let coldStart = true;

/**
 * ColdStart once per function instance, by function: what Powertools' captureColdStartMetric
 * publishes (same name, same `function_name` dimension), plus the request id it delayed, which
 * captureColdStartMetric cannot add.
 */
export function countColdStart(functionName: string, requestId: string): void {
  if (!coldStart) return;
  coldStart = false;
  count(METRICS.coldStart, requestId, { function_name: functionName });
}

/** A create stored a pet: a replay does not count, a retry that found its own earlier write does (it is that pet). */
export function countPetCreated(requestId: string): void {
  count(METRICS.petsCreated, requestId);
}

/** A create was answered from its Idempotency-Key record. */
export function countIdempotentReplay(requestId: string): void {
  count(METRICS.idempotentReplays, requestId);
}

/** The authorizer refused a request (`missing`, `invalid`) or could not check its key (`unavailable`). */
export function countRefusedAuthorization(reason: string, requestId: string): void {
  count(METRICS.authorizationsRefused, requestId, { [REFUSAL_REASON_DIMENSION]: reason });
}
