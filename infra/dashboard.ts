import { Duration, Stack } from 'aws-cdk-lib';
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
import { Construct } from 'constructs';
import {
  ACCESS_LOG_WATCHES,
  API_WATCHES,
  FUNCTION_WATCHES,
  INDEX_WATCHES,
  TABLE_WATCHES,
  type ApiAccessLog,
  type Watch,
  type WatchedResources,
} from './watched-metrics';
import { ANSWER_DIMENSIONS, METRICS, REFUSAL_REASON_DIMENSION, SERVICE_DIMENSION } from '../shared/facts/metric-names';
import { SERVICE_NAME } from '../shared/facts/service';
import { WAY_BACK } from './release-kind';

export interface DashboardProps extends WatchedResources {
  /** Namespace of the stage's business metrics (shared/facts/metric-names.ts). */
  readonly metricsNamespace: string;
  /** Alarms whose state heads the dashboard. */
  readonly alarms: readonly IAlarm[];
  /** What the access log counts, graphed beside the alarms it feeds. */
  readonly accessLog: ApiAccessLog;
  /** An emergency release: a notice above the alarms says none of them rolls a deployment back, and the way back. */
  readonly emergency: boolean;
}

const PERIOD = Duration.minutes(1);
const WIDTH = 24;

/** The stage's CloudWatch dashboard, named after the stack: alarm states, a graph per watch, then the business metrics. */
export class Dashboard extends Construct {
  readonly dashboard: CloudWatchDashboard;

  constructor(scope: Construct, id: string, props: DashboardProps) {
    super(scope, id);
    /** Graphs side by side across the dashboard's width: a title and the metrics it draws, each. */
    const row = (graphs: ReadonlyArray<readonly [title: string, metrics: IMetric[]]>) =>
      graphs.map(([title, left]) => new GraphWidget({ title, left, width: WIDTH / graphs.length, height: 6 }));
    /** A graph per watch, with each of its lines for every resource. */
    const watchRow = <TResource>(resources: ReadonlyMap<string, TResource>, watches: readonly Watch<TResource>[]) =>
      row(
        watches.map(({ title, lines }) => [
          title,
          lines.flatMap((line) =>
            [...resources].map(([name, resource]) => line.metric(resource, PERIOD).with({ label: line.label(name) })),
          ),
        ]),
      );

    this.dashboard = new CloudWatchDashboard(this, 'Dashboard', {
      dashboardName: Stack.of(this).stackName,
      defaultInterval: Duration.hours(3),
      widgets: [
        ...(props.emergency ? [[emergencyNotice()]] : []),
        [new AlarmStatusWidget({ title: 'Alarms', alarms: [...props.alarms], width: WIDTH, height: 4 })],
        [new TextWidget({ markdown: '## API', width: WIDTH, height: 1 })],
        watchRow(new Map([['Api', props.api]]), API_WATCHES),
        watchRow(new Map([['Api', props.accessLog]]), ACCESS_LOG_WATCHES),
        [new TextWidget({ markdown: '## Functions', width: WIDTH, height: 1 })],
        watchRow(props.functions, FUNCTION_WATCHES),
        [new TextWidget({ markdown: '## DynamoDB', width: WIDTH, height: 1 })],
        watchRow(props.tables, TABLE_WATCHES),
        watchRow(props.indexes, INDEX_WATCHES),
        [new TextWidget({ markdown: `## Business metrics (namespace \`${props.metricsNamespace}\`)`, width: WIDTH, height: 1 })],
        row([
          ['Pets created', [this.business(props.metricsNamespace, METRICS.petsCreated)]],
          ['Idempotent replays', [this.business(props.metricsNamespace, METRICS.idempotentReplays)]],
          [
            'Authorizations refused, by reason',
            [search(props.metricsNamespace, METRICS.authorizationsRefused, [REFUSAL_REASON_DIMENSION])],
          ],
          ['Cold starts, by function', [search(props.metricsNamespace, METRICS.coldStart, [SERVICE_DIMENSION, 'function_name'])]],
        ]),
        // What each version answered beside its successes: during a deployment, the old and new versions side by side.
        row([
          [
            'Judged answers, by function, status and version',
            [
              search(props.metricsNamespace, METRICS.answers, [
                SERVICE_DIMENSION,
                'function_name',
                ANSWER_DIMENSIONS.status,
                ANSWER_DIMENSIONS.version,
              ]),
            ],
          ],
          [
            "Authorizer's judged answers, by status and version",
            [search(props.metricsNamespace, METRICS.authorizerAnswers, [ANSWER_DIMENSIONS.status, ANSWER_DIMENSIONS.version])],
          ],
        ]),
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

/** What heads a stage's dashboard on an emergency release: the alarms below it then roll nothing back. */
function emergencyNotice(): TextWidget {
  return new TextWidget({
    markdown:
      '# Emergency release: no alarm rolls a deployment back\n' +
      `Every function moved all at once and CodeDeploy ignores the alarms below. Way back: ${WAY_BACK}.`,
    width: WIDTH,
    height: 3,
  });
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
