import { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  TreatMissingData,
  type IMetric,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { AlarmThresholds } from './stages';

export interface MonitoringProps {
  /** The API whose 5xx rate is watched. */
  readonly api: HttpApi;
  /** Functions watched for errors and throttles, by a name used in alarm descriptions. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Tables watched for throttled requests, by a name used in alarm descriptions. */
  readonly tables: ReadonlyMap<string, TableV2>;
  readonly thresholds: AlarmThresholds;
  /** SNS topic notified when an alarm fires or clears; none when undefined. */
  readonly alarmTopicArn?: string;
}

/** The operations our code and the keys CLI perform, so every throttled request is counted. */
const WATCHED_OPERATIONS = [
  Operation.GET_ITEM,
  Operation.PUT_ITEM,
  Operation.QUERY,
  Operation.UPDATE_ITEM,
  Operation.DELETE_ITEM,
  Operation.SCAN,
];

/**
 * Alarms on the signals that mean clients are failing: the API's 5xx rate (our 503s and API
 * Gateway's own 5xx), unhandled function errors (crashes, timeouts, broken cold starts: the
 * handlers turn every expected failure into a response), Lambda throttles, and DynamoDB throttling.
 * Alarm names are generated, so two stages can share an account.
 */
export class Monitoring extends Construct {
  readonly alarms: Alarm[] = [];
  private readonly thresholds: AlarmThresholds;
  private readonly period: Duration;
  private readonly topic: ITopic | undefined;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.thresholds = props.thresholds;
    this.period = Duration.minutes(props.thresholds.periodMinutes);
    this.topic = props.alarmTopicArn === undefined ? undefined : Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn);

    const { api } = props;
    this.addAlarm('ApiServerErrorRate', {
      metric: new MathExpression({
        // No traffic, no data point (treated as not breaching); traffic without errors, 0 %.
        expression: '100 * FILL(errors, 0) / requests',
        usingMetrics: {
          errors: api.metricServerError({ period: this.period, statistic: 'Sum' }),
          requests: api.metricCount({ period: this.period, statistic: 'Sum' }),
        },
        period: this.period,
        label: '5xx responses (%)',
      }),
      threshold: props.thresholds.serverErrorRatePercent,
      description: `${props.thresholds.serverErrorRatePercent} % or more of API requests answered with a 5xx. Check the access log's status and integrationError, then the function alarms.`,
    });

    for (const [name, fn] of props.functions) {
      this.addAlarm(`${name}Errors`, {
        metric: fn.metricErrors({ period: this.period, statistic: 'Sum' }),
        threshold: props.thresholds.functionErrors,
        description: `The ${name} function failed with unhandled errors (crash, timeout or cold-start failure). Check its log group.`,
      });
      this.addAlarm(`${name}Throttles`, {
        metric: fn.metricThrottles({ period: this.period, statistic: 'Sum' }),
        threshold: props.thresholds.functionThrottles,
        description: `Lambda throttled the ${name} function: the account's concurrency is exhausted. Clients get 5xx.`,
      });
    }

    for (const [name, table] of props.tables) {
      this.addAlarm(`${name}ThrottledRequests`, {
        metric: table.metricThrottledRequestsForOperations({ operations: WATCHED_OPERATIONS, period: this.period }),
        threshold: props.thresholds.dynamoDbThrottledRequests,
        description: `DynamoDB throttled requests on the ${name} table. Clients get 503 once the SDK's retries are exhausted.`,
      });
    }
  }

  private addAlarm(id: string, options: { metric: IMetric; threshold: number; description: string }): void {
    const alarm = new Alarm(this, id, {
      metric: options.metric,
      threshold: options.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: this.thresholds.evaluationPeriods,
      datapointsToAlarm: this.thresholds.datapointsToAlarm,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    if (this.topic) {
      alarm.addAlarmAction(new SnsAction(this.topic));
      alarm.addOkAction(new SnsAction(this.topic));
    }
    this.alarms.push(alarm);
  }
}
