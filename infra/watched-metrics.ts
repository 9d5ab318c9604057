import type { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { MathExpression, type IMetric, type Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { Operation, type ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { AlarmThresholds } from './stages';
import { FUNCTION_TIMEOUT_MS } from '../shared/facts/time-budget';

/**
 * What a stage watches: the alarms (infra/monitoring.ts) and the dashboard (infra/dashboard.ts) are
 * both built from the watches below, so every alarm has a graph of what it watches beside the others.
 */
export interface WatchedResources {
  /** The API: its traffic, errors and latency. */
  readonly api: HttpApi;
  /** The functions, by a name used in graph labels, alarm ids and alarm descriptions. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** The tables in use, by a name used in graph labels, alarm ids and alarm descriptions. */
  readonly tables: ReadonlyMap<string, ITableV2>;
  /** The tables' global secondary indexes, by a name used in graph labels. */
  readonly indexes: ReadonlyMap<string, TableIndex>;
}

/** One global secondary index of a table: DynamoDB publishes its capacity and throttles apart from the table's. */
export interface TableIndex {
  readonly table: ITableV2;
  /** As the table's key design names it (shared/dynamodb/). */
  readonly indexName: string;
}

/** One line of a graph, drawn for each resource of the watch's kind. */
export interface GraphLine<TResource> {
  /** The line's label, given the resource's name. */
  readonly label: (name: string) => string;
  readonly metric: (resource: TResource, period: Duration) => Metric;
}

/** When a watch raises an alarm. */
export interface AlarmRule<TResource> {
  /** The alarm's construct id, after the resource's name. */
  readonly id: string;
  /** What the alarm compares with its threshold, over the alarms' period. */
  readonly metric: (resource: TResource, period: Duration, thresholds: AlarmThresholds) => IMetric;
  /** The alarm fires at this value or above. */
  readonly threshold: (thresholds: AlarmThresholds) => number;
  /** What it means and where to look first, for whoever it reaches. */
  readonly description: (name: string, thresholds: AlarmThresholds) => string;
}

/** One thing watched on each resource of a kind: a graph on the dashboard, and an alarm where clients fail or are about to. */
export interface Watch<TResource> {
  /** The graph's title. */
  readonly title: string;
  readonly lines: readonly GraphLine<TResource>[];
  readonly alarm?: AlarmRule<TResource>;
}

const sum = (period: Duration) => ({ period, statistic: 'Sum' });

/**
 * A metric that only counts once the API served `minimumRequests` in the period: below that a rate
 * or a percentile is noise (0 then, which never breaches).
 */
function whenBusy(
  api: HttpApi,
  period: Duration,
  thresholds: AlarmThresholds,
  expression: string,
  metrics: Record<string, IMetric>,
  label: string,
) {
  return new MathExpression({
    expression: `IF(requests >= ${thresholds.minimumRequests}, ${expression}, 0)`,
    usingMetrics: { ...metrics, requests: api.metricCount(sum(period)) },
    period,
    label,
  });
}

/** The API's requests, 4xx and 5xx rates and latency. */
export const API_WATCHES: readonly Watch<HttpApi>[] = [
  { title: 'Requests', lines: [{ label: () => 'requests', metric: (api, period) => api.metricCount(sum(period)) }] },
  {
    title: '4xx (429 throttled, 401 refused, 404)',
    lines: [{ label: () => '4xx', metric: (api, period) => api.metricClientError(sum(period)) }],
    alarm: {
      id: 'ClientErrorRate',
      metric: (api, period, thresholds) =>
        whenBusy(
          api,
          period,
          thresholds,
          '100 * FILL(clientErrors, 0) / requests',
          { clientErrors: api.metricClientError(sum(period)) },
          '4xx responses (%)',
        ),
      threshold: (thresholds) => thresholds.clientErrorRatePercent,
      description: (_, thresholds) =>
        `${thresholds.clientErrorRatePercent} % or more of API requests answered with a 4xx: throttling (429, check the ` +
        'stage throttle), a 401 storm (refused authorizations by reason on the dashboard; a leaked or revoked key), or a broken client release.',
    },
  },
  {
    title: '5xx',
    lines: [{ label: () => '5xx', metric: (api, period) => api.metricServerError(sum(period)) }],
    alarm: {
      id: 'ServerErrorRate',
      metric: (api, period) =>
        new MathExpression({
          // No traffic, no data point (treated as not breaching); traffic without errors, 0 %.
          expression: '100 * FILL(errors, 0) / requests',
          usingMetrics: { errors: api.metricServerError(sum(period)), requests: api.metricCount(sum(period)) },
          period,
          label: '5xx responses (%)',
        }),
      threshold: (thresholds) => thresholds.serverErrorRatePercent,
      description: (_, thresholds) =>
        `${thresholds.serverErrorRatePercent} % or more of API requests answered with a 5xx. Check the access log's status and integrationError, then the function alarms. ` +
        'It rolls nothing back: a deployment is judged by its own version (the NewVersion alarms).',
    },
  },
  {
    title: 'Latency (ms)',
    lines: [
      { label: () => 'p50', metric: (api, period) => api.metricLatency({ period, statistic: 'p50' }) },
      { label: () => 'p99', metric: (api, period) => api.metricLatency({ period, statistic: 'p99' }) },
      { label: () => 'integration p99', metric: (api, period) => api.metricIntegrationLatency({ period, statistic: 'p99' }) },
    ],
    alarm: {
      id: 'LatencyP99',
      metric: (api, period, thresholds) =>
        whenBusy(api, period, thresholds, 'latency', { latency: api.metricLatency({ period, statistic: 'p99' }) }, 'p99 latency (ms)'),
      threshold: (thresholds) => thresholds.p99LatencyMs,
      description: (_, thresholds) =>
        `The slowest 1 % of API requests took ${thresholds.p99LatencyMs} ms or more. Check the functions' Duration and DynamoDB latency on the dashboard.`,
    },
  },
];

/** The API with what its access log counts: the 401s API Gateway's own metrics do not tell from other 4xx. */
export interface ApiAccessLog {
  readonly api: HttpApi;
  /** 401 answers to requests that carried a key (infra/monitoring.ts): every refusal but one of a request with none. */
  readonly keyedRefusals: (period: Duration) => Metric;
  /** 401 answers to requests the authorizer accepted: only a route version refusing valid keys writes one. */
  readonly acceptedKeyRefusals: (period: Duration) => Metric;
}

/**
 * The share of requests answered 401 with a key that a person should look at: a leaked or guessed key in
 * use, a client still holding a revoked one, an authorizer refusing some valid keys.
 */
const KEYED_REFUSAL_RATE_PERCENT = 5;

/**
 * What the access log tells of 401s. They notify and roll nothing back: anyone can send a key that is refused,
 * and a version refusing valid keys is judged against its old version (infra/version-alarms.ts).
 */
export const ACCESS_LOG_WATCHES: readonly Watch<ApiAccessLog>[] = [
  {
    title: '401 to requests with a key',
    lines: [{ label: () => '401 with a key', metric: (log, period) => log.keyedRefusals(period) }],
    alarm: {
      id: 'KeyedRefusalRate',
      metric: (log, period, thresholds) =>
        whenBusy(
          log.api,
          period,
          thresholds,
          '100 * FILL(refused, 0) / requests',
          { refused: log.keyedRefusals(period) },
          '401 to requests with a key (%)',
        ),
      threshold: () => KEYED_REFUSAL_RATE_PERCENT,
      description: () =>
        `${KEYED_REFUSAL_RATE_PERCENT} % or more of API requests carried a key and were answered 401: a leaked, guessed or ` +
        "revoked key in use, or an authorizer refusing some valid keys. The access log's authorizerOutcome and keyId say " +
        'which. It rolls nothing back: anyone can send keys that are refused.',
    },
  },
  {
    title: '401 to requests the authorizer accepted',
    lines: [{ label: () => '401 to an accepted key', metric: (log, period) => log.acceptedKeyRefusals(period) }],
    alarm: {
      id: 'AcceptedKeyRefusals',
      metric: (log, period) => log.acceptedKeyRefusals(period),
      threshold: () => 1,
      description: () =>
        'A route answered 401 to a request whose key the authorizer accepted: a route version refusing valid keys, ' +
        "or one that cannot read the authorizer's verdict. The route's NewVersion401 alarm rolls its deployment back. The access log's " +
        'routeKey says which route (status 401, authorizerOutcome allowed).',
    },
  },
];

/** A function's duration at which it is close enough to its timeout to alarm. */
function nearTimeoutMs(thresholds: AlarmThresholds): number {
  return Math.round((FUNCTION_TIMEOUT_MS * thresholds.durationPercentOfTimeout) / 100);
}

const functionErrors = (fn: IFunction, period: Duration) => fn.metricErrors(sum(period));
const functionThrottles = (fn: IFunction, period: Duration) => fn.metricThrottles(sum(period));

/**
 * Each function's duration, errors, throttles and concurrency. Errors are unhandled ones (crashes,
 * timeouts, broken cold starts): the handlers turn every expected failure into a response.
 */
export const FUNCTION_WATCHES: readonly Watch<IFunction>[] = [
  {
    title: 'Duration p99 (ms)',
    lines: [{ label: (name) => name, metric: (fn, period) => fn.metricDuration({ period, statistic: 'p99' }) }],
    alarm: {
      id: 'NearTimeout',
      metric: (fn, period) => fn.metricDuration({ period, statistic: 'Maximum' }),
      threshold: nearTimeoutMs,
      description: (name, thresholds) =>
        `The ${name} function ran ${nearTimeoutMs(thresholds)} ms or more, ${thresholds.durationPercentOfTimeout} % of its ${FUNCTION_TIMEOUT_MS} ms timeout: DynamoDB is slow or its calls are retrying. Next come timeouts.`,
    },
  },
  {
    title: 'Errors',
    lines: [{ label: (name) => name, metric: functionErrors }],
    alarm: {
      id: 'Errors',
      metric: functionErrors,
      threshold: (thresholds) => thresholds.functionErrors,
      description: (name) =>
        `The ${name} function failed with unhandled errors (crash, timeout or cold-start failure). Check its log group.`,
    },
  },
  {
    title: 'Throttles',
    lines: [{ label: (name) => name, metric: functionThrottles }],
    alarm: {
      id: 'Throttles',
      metric: functionThrottles,
      threshold: (thresholds) => thresholds.functionThrottles,
      description: (name) => `Lambda throttled the ${name} function: the account's concurrency is exhausted. Clients get 5xx.`,
    },
  },
  {
    title: 'Concurrent executions',
    lines: [{ label: (name) => name, metric: (fn, period) => fn.metric('ConcurrentExecutions', { period, statistic: 'Maximum' }) }],
  },
];

/** The operations our code and the keys CLI perform, so every throttled request is counted. */
const WATCHED_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.QUERY,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.SCAN,
];

/** Each table's consumed capacity and throttling. */
export const TABLE_WATCHES: readonly Watch<ITableV2>[] = [
  {
    title: 'Consumed read capacity',
    lines: [{ label: (name) => `${name} RCU`, metric: (table, period) => table.metricConsumedReadCapacityUnits(sum(period)) }],
  },
  {
    title: 'Consumed write capacity',
    lines: [{ label: (name) => `${name} WCU`, metric: (table, period) => table.metricConsumedWriteCapacityUnits(sum(period)) }],
  },
  {
    title: 'Throttle events',
    lines: [
      { label: (name) => `${name} reads`, metric: (table, period) => table.metric('ReadThrottleEvents', sum(period)) },
      { label: (name) => `${name} writes`, metric: (table, period) => table.metric('WriteThrottleEvents', sum(period)) },
    ],
    alarm: {
      id: 'ThrottledRequests',
      metric: (table, period) => table.metricThrottledRequestsForOperations({ operations: WATCHED_OPERATIONS, period }),
      threshold: (thresholds) => thresholds.dynamoDbThrottledRequests,
      description: (name) => `DynamoDB throttled requests on the ${name} table. Clients get 503 once the SDK's retries are exhausted.`,
    },
  },
];

/** A metric DynamoDB publishes for one index: the table's own (TableName alone) leaves every index out. */
const indexMetric = (metricName: string) => (index: TableIndex, period: Duration) =>
  index.table.metric(metricName, {
    ...sum(period),
    dimensionsMap: { TableName: index.table.tableName, GlobalSecondaryIndexName: index.indexName },
  });

/**
 * Each index's consumed capacity and throttle events. No alarm of their own: an index throttle throttles
 * the table's PutItem or Query, which the table's alarm counts; these graphs tell which index it was.
 */
export const INDEX_WATCHES: readonly Watch<TableIndex>[] = [
  {
    title: 'Index consumed read capacity',
    lines: [{ label: (name) => `${name} RCU`, metric: indexMetric('ConsumedReadCapacityUnits') }],
  },
  {
    title: 'Index consumed write capacity',
    lines: [{ label: (name) => `${name} WCU`, metric: indexMetric('ConsumedWriteCapacityUnits') }],
  },
  {
    title: 'Index throttle events',
    lines: [
      { label: (name) => `${name} reads`, metric: indexMetric('ReadThrottleEvents') },
      { label: (name) => `${name} writes`, metric: indexMetric('WriteThrottleEvents') },
    ],
  },
];
