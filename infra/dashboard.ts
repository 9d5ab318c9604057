import { Duration, Stack } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  AlarmStatusWidget,
  Dashboard as CloudWatchDashboard,
  GraphWidget,
  MathExpression,
  Metric,
  TextWidget,
  type IAlarm,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { METRICS, REFUSAL_REASON_DIMENSION, SERVICE_DIMENSION } from '../src/facts/metric-names';
import { SERVICE_NAME } from '../src/facts/service';

export interface DashboardProps {
  /** The API whose traffic, errors and latency are shown. */
  readonly api: HttpApi;
  /** Functions shown, by name. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Tables shown, by name. */
  readonly tables: ReadonlyMap<string, TableV2>;
  /** Namespace of the stage's business metrics (src/facts/metric-names.ts). */
  readonly metricsNamespace: string;
  /** Alarms whose state heads the dashboard. */
  readonly alarms: readonly IAlarm[];
}

const PERIOD = Duration.minutes(1);
const WIDTH = 24;

/**
 * The stage's CloudWatch dashboard, named after the stack: alarm states first, then the API
 * (requests, 4xx, 5xx, latency), each function (duration, errors, throttles, concurrency), DynamoDB
 * (capacity, throttling) and the business metrics the functions publish.
 */
export class Dashboard extends Construct {
  readonly dashboard: CloudWatchDashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    const { api } = props;
    const functions = [...props.functions];
    const tables = [...props.tables];
    const sum = { period: PERIOD, statistic: 'Sum' };
    const graph = (title: string, left: IMetric[], width = WIDTH / 4) => new GraphWidget({ title, left, width, height: 6 });
    const perFunction = (metric: (fn: IFunction) => Metric) => functions.map(([name, fn]) => metric(fn).with({ label: name }));
    const perTable = (metric: (table: TableV2) => Metric, label: string) =>
      tables.map(([name, table]) => metric(table).with({ label: `${name} ${label}` }));

    this.dashboard = new CloudWatchDashboard(this, 'Dashboard', {
      dashboardName: Stack.of(this).stackName,
      defaultInterval: Duration.hours(3),
      widgets: [
        [new AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: WIDTH, height: 4 })],
        [new TextWidget({ markdown: '## API', width: WIDTH, height: 1 })],
        [
          graph('Requests', [api.metricCount(sum).with({ label: 'requests' })]),
          graph('4xx (429 throttled, 401 refused, 404)', [api.metricClientError(sum).with({ label: '4xx' })]),
          graph('5xx', [api.metricServerError(sum).with({ label: '5xx' })]),
          graph('Latency (ms)', [
            api.metricLatency({ period: PERIOD, statistic: 'p50' }).with({ label: 'p50' }),
            api.metricLatency({ period: PERIOD, statistic: 'p99' }).with({ label: 'p99' }),
            api.metricIntegrationLatency({ period: PERIOD, statistic: 'p99' }).with({ label: 'integration p99' }),
          ]),
        ],
        [new TextWidget({ markdown: '## Functions', width: WIDTH, height: 1 })],
        [
          graph(
            'Duration p99 (ms)',
            perFunction((fn) => fn.metricDuration({ period: PERIOD, statistic: 'p99' })),
          ),
          graph(
            'Errors',
            perFunction((fn) => fn.metricErrors(sum)),
          ),
          graph(
            'Throttles',
            perFunction((fn) => fn.metricThrottles(sum)),
          ),
          graph(
            'Concurrent executions',
            perFunction((fn) => fn.metric('ConcurrentExecutions', { period: PERIOD, statistic: 'Maximum' })),
          ),
        ],
        [new TextWidget({ markdown: '## DynamoDB', width: WIDTH, height: 1 })],
        [
          graph(
            'Consumed read capacity',
            perTable((table) => table.metricConsumedReadCapacityUnits(sum), 'RCU'),
            WIDTH / 3,
          ),
          graph(
            'Consumed write capacity',
            perTable((table) => table.metricConsumedWriteCapacityUnits(sum), 'WCU'),
            WIDTH / 3,
          ),
          graph(
            'Throttle events',
            [
              ...perTable((table) => table.metric('ReadThrottleEvents', sum), 'reads'),
              ...perTable((table) => table.metric('WriteThrottleEvents', sum), 'writes'),
            ],
            WIDTH / 3,
          ),
        ],
        [new TextWidget({ markdown: `## Business metrics (namespace \`${props.metricsNamespace}\`)`, width: WIDTH, height: 1 })],
        [
          graph('Pets created', [this.business(props.metricsNamespace, METRICS.petsCreated)]),
          graph('Idempotent replays', [this.business(props.metricsNamespace, METRICS.idempotentReplays)]),
          graph('Authorizations refused, by reason', [
            search(props.metricsNamespace, METRICS.authorizationsRefused, [SERVICE_DIMENSION, REFUSAL_REASON_DIMENSION]),
          ]),
          graph('Cold starts, by function', [search(props.metricsNamespace, METRICS.coldStart, [SERVICE_DIMENSION, 'function_name'])]),
        ],
      ],
    });
  }

  private business(namespace: string, metricName: string): Metric {
    return new Metric({
      namespace,
      metricName,
      dimensionsMap: { [SERVICE_DIMENSION]: SERVICE_NAME },
      period: PERIOD,
      statistic: 'Sum',
      label: metricName,
    });
  }
}

/** One line per value of a dimension (a refusal reason, a function), whatever values show up. */
function search(namespace: string, metricName: string, dimensions: readonly string[]): MathExpression {
  return new MathExpression({
    expression: `SEARCH('{${[namespace, ...dimensions].join(',')}} MetricName="${metricName}"', 'Sum', ${PERIOD.toSeconds()})`,
    usingMetrics: {},
    label: metricName,
    period: PERIOD,
  });
}
