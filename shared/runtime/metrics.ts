import * as v from 'valibot';
import { ENV } from '../facts/environment';
import { readConfig } from './config';
import { ANSWER_DIMENSIONS, JUDGED_STATUSES, METRICS, PROBE_METRICS, SERVICE_DIMENSION } from '../facts/metric-names';
import { writeLine } from './output';
import { SERVICE_NAME } from '../facts/service';

/**
 * The business metrics, as CloudWatch embedded metric format (EMF) lines on stdout: no API call on the
 * request path and no permission beyond writing logs. Each metric is its own line, written at once, so
 * nothing is lost when an invocation fails and a cold start's `function_name` never leaks onto another metric.
 * Our own rather than a library's, which costs more than three counters are worth (docs/observability.md).
 */

/** How the POWERTOOLS_* convention reads a boolean variable: 1, y, yes, t, true, on (any case) are true. */
const TRUE_VALUES = new Set(['1', 'y', 'yes', 't', 'true', 'on']);

/** What the metrics read: whether they are off, and the namespace they need unless they are. */
export const METRICS_CONFIG = {
  [ENV.metricsDisabled]: v.optional(
    v.pipe(
      v.string(),
      v.transform((value) => TRUE_VALUES.has(value.trim().toLowerCase())),
    ),
    '',
  ),
  [ENV.metricsNamespace]: v.optional(v.string()),
} as const;

type MetricsSettings = v.InferOutput<v.ObjectSchema<typeof METRICS_CONFIG, undefined>>;

/** The rule across METRICS_CONFIG's variables, reported as the namespace's: metrics that are on need one. */
export const METRICS_NAMESPACE_RULE = v.forward(
  v.check<MetricsSettings, string>(
    (settings) => settings[ENV.metricsDisabled] || Boolean(settings[ENV.metricsNamespace]?.trim()),
    `is required unless ${ENV.metricsDisabled} is true`,
  ),
  [ENV.metricsNamespace],
);

interface MetricsConfig {
  readonly namespace: string;
}

/** Read at the first metric, once per instance; undefined when metrics are off. */
let config: MetricsConfig | undefined | null = null;

function metricsConfig(): MetricsConfig | undefined {
  if (config === null) {
    const read = readConfig(v.pipe(v.object(METRICS_CONFIG), METRICS_NAMESPACE_RULE));
    config = read[ENV.metricsDisabled] ? undefined : { namespace: read[ENV.metricsNamespace]! };
  }
  return config;
}

/** The parts of a metric's line that never change, by metric and dimension values, made at its first use. */
const fixedParts = new Map<string, { directive: string; values: string }>();

/**
 * One count of `metricName` under `dimensions`, and the service's unless `withService` is false (a metric the
 * access log counts too, which has no such field); `alsoWithout` names a dimension the same line also leaves
 * out, so CloudWatch keeps a second metric that adds up every value of it (one EMF line, two metrics).
 */
function count(
  metricName: string,
  requestId: string,
  dimensions: Record<string, string> = {},
  alsoWithout?: string,
  withService = true,
): void {
  const configured = metricsConfig();
  if (configured === undefined) return;
  const key = JSON.stringify([metricName, dimensions, alsoWithout, withService]);
  let fixed = fixedParts.get(key);
  if (fixed === undefined) {
    const dimensionValues = withService ? { [SERVICE_DIMENSION]: SERVICE_NAME, ...dimensions } : dimensions;
    const names = Object.keys(dimensionValues);
    const dimensionSets = alsoWithout === undefined ? [names] : [names.filter((name) => name !== alsoWithout), names];
    fixed = {
      directive: JSON.stringify([
        { Namespace: configured.namespace, Dimensions: dimensionSets, Metrics: [{ Name: metricName, Unit: 'Count' }] },
      ]),
      values: JSON.stringify({ ...dimensionValues, [metricName]: 1 }).slice(1, -1),
    };
    fixedParts.set(key, fixed);
  }
  // One EMF document: the directive, the request id, the dimension values and the count.
  const line = `{"_aws":{"Timestamp":${Date.now()},"CloudWatchMetrics":${fixed.directive}},"requestId":${JSON.stringify(requestId)},${fixed.values}}`;
  writeLine('stdout', line);
}

let coldStart = true;

/**
 * ColdStart once per function instance, by function (the `function_name` dimension, as the dashboard
 * reads it), with the request id it delayed.
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

const judged = new Set<number>(JUDGED_STATUSES);

/**
 * An answer of a judged status (JUDGED_STATUSES) by this version of the function: what a deployment sets
 * against the old version's (infra/version-alarms.ts). Any other answer writes nothing.
 */
export function countAnswer(functionName: string, version: string, status: number, requestId: string): void {
  if (!judged.has(status)) return;
  count(
    METRICS.answers,
    requestId,
    { function_name: functionName, [ANSWER_DIMENSIONS.status]: String(status), [ANSWER_DIMENSIONS.version]: version },
    ANSWER_DIMENSIONS.version,
  );
}

/**
 * The authorizer's verdict of a judged status to a request that did not come through API Gateway, whose access
 * log counts every other (infra/version-alarms.ts): the deployment's own traffic, which knows the version that answered.
 */
export function countAuthorizerAnswer(status: 401 | 503, version: string, requestId: string): void {
  count(
    METRICS.authorizerAnswers,
    requestId,
    { [ANSWER_DIMENSIONS.status]: String(status), [ANSWER_DIMENSIONS.version]: version },
    ANSWER_DIMENSIONS.version,
    false,
  );
}

/** A create was answered from its Idempotency-Key record. */
export function countIdempotentReplay(requestId: string): void {
  count(METRICS.idempotentReplays, requestId);
}

/** An EMF unit this file writes. */
type Unit = 'Count' | 'Milliseconds' | 'None';

/**
 * One document of several values at `timestamp`, with the service dimension only: the probe's, once
 * a run, so nothing of it is worth caching.
 */
function publish(values: ReadonlyArray<{ name: string; unit: Unit; value: number }>, requestId: string, timestamp: number): void {
  const target = metricsConfig();
  if (target === undefined) return;
  const directive = {
    Namespace: target.namespace,
    Dimensions: [[SERVICE_DIMENSION]],
    Metrics: values.map(({ name, unit }) => ({ Name: name, Unit: unit })),
  };
  const document = {
    _aws: { Timestamp: timestamp, CloudWatchMetrics: [directive] },
    requestId,
    [SERVICE_DIMENSION]: SERVICE_NAME,
    ...Object.fromEntries(values.map(({ name, value }) => [name, value])),
  };
  writeLine('stdout', JSON.stringify(document));
}

/**
 * One run of the synthetic probe that had a key configured: whether every step passed, and how long
 * the steps took (absent when the key could not be read and no step ran). Stamped with the run's
 * start, the scheduled minute, so a slow run still lands in the alarm period it belongs to.
 */
export function recordProbeRun(
  run: { readonly success: boolean; readonly latencyMs?: number },
  requestId: string,
  startedAt: number,
): void {
  publish(
    [
      { name: PROBE_METRICS.success, unit: 'None', value: run.success ? 1 : 0 },
      ...(run.latencyMs === undefined ? [] : [{ name: PROBE_METRICS.latency, unit: 'Milliseconds' as const, value: run.latencyMs }]),
    ],
    requestId,
    startedAt,
  );
}

/** A run of the synthetic probe found no API key to probe with: counted apart, and no success value at all. */
export function countProbeNotConfigured(requestId: string, startedAt: number): void {
  publish([{ name: PROBE_METRICS.notConfigured, unit: 'Count', value: 1 }], requestId, startedAt);
}
