import { Duration, Validations } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, TreatMissingData, type IAlarm, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Operation, type TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import type { AlarmSubscription, AlarmThresholds } from './stages';
import { FUNCTION_TIMEOUT_MS } from '../src/facts/time-budget';

export interface MonitoringProps {
  /** The API whose error rates and latency are watched. */
  readonly api: HttpApi;
  /** Functions watched for errors, throttles and duration, by a name used in alarm descriptions. */
  readonly functions: ReadonlyMap<string, IFunction>;
  /** Tables watched for throttled requests, by a name used in alarm descriptions. */
  readonly tables: ReadonlyMap<string, TableV2>;
  /** When an alarm fires. */
  readonly thresholds: AlarmThresholds;
  /** Who the alarm topic notifies. */
  readonly subscriptions: readonly AlarmSubscription[];
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
 * The stage's alarms and the topic they notify. They watch what means clients are failing or about
 * to: the API's 5xx rate, its 4xx rate (throttling answered 429, 401 storms, a broken client) and
 * p99 latency; per function, unhandled errors (crashes, timeouts, broken cold starts: the handlers
 * turn every expected failure into a response), throttles and a duration nearing the timeout; and
 * DynamoDB throttling. Every alarm notifies the topic when it fires and when it clears. Alarm names
 * are generated, so two stages can share an account.
 */
export class Monitoring extends Construct {
  /** Every alarm of the stage. */
  readonly alarms: Alarm[] = [];
  /** Notified by every alarm; its subscriptions are the stage's `alarmSubscriptions`. */
  readonly topic: Topic;
  /** The API's 5xx-rate and p99-latency alarms: a deployment that sets them off is rolled back. */
  readonly apiAlarms: readonly IAlarm[];
  private readonly functionErrorAlarms = new Map<string, IAlarm>();
  private readonly thresholds: AlarmThresholds;
  private readonly period: Duration;
  private readonly targets: ITopic[];

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.thresholds = props.thresholds;
    this.period = Duration.minutes(props.thresholds.periodMinutes);

    this.topic = new Topic(this, 'AlarmTopic', { displayName: 'Animal store alarms', enforceSSL: true });
    Validations.of(this.topic).acknowledge({
      id: 'AwsSolutions-SNS2',
      reason:
        'Alarm notifications carry alarm names, metric values and thresholds, no customer data. Encrypting them would ' +
        'need a customer managed KMS key whose policy admits CloudWatch (the AWS managed SNS key does not), for nothing ' +
        'worth protecting.',
    });
    this.targets = [this.topic];
    props.subscriptions.forEach((subscription, index) => {
      if ('email' in subscription) {
        const email = this.topic.addSubscription(new EmailSubscription(subscription.email));
        Validations.of(email).acknowledge({
          id: 'Serverless-SNSRedrivePolicy',
          reason:
            'SNS retries e-mail deliveries itself; a queue of undelivered alarm e-mails would be one more thing nobody ' +
            "watches, and the alarm's state and history stay in CloudWatch either way.",
        });
      }
      // An existing topic (a pager, AWS Chatbot) is notified directly: SNS topics cannot subscribe to topics.
      else this.targets.push(Topic.fromTopicArn(this, `ExistingTopic${index}`, subscription.topicArn));
    });

    const { api, thresholds } = props;
    const apiMetric = { period: this.period, statistic: 'Sum' };
    this.apiAlarms = [
      this.addAlarm('ApiServerErrorRate', {
        metric: new MathExpression({
          // No traffic, no data point (treated as not breaching); traffic without errors, 0 %.
          expression: '100 * FILL(errors, 0) / requests',
          usingMetrics: { errors: api.metricServerError(apiMetric), requests: api.metricCount(apiMetric) },
          period: this.period,
          label: '5xx responses (%)',
        }),
        threshold: thresholds.serverErrorRatePercent,
        description: `${thresholds.serverErrorRatePercent} % or more of API requests answered with a 5xx. Check the access log's status and integrationError, then the function alarms.`,
      }),
      this.addAlarm('ApiLatencyP99', {
        metric: this.whenBusy(
          api,
          'latency',
          { latency: api.metricLatency({ period: this.period, statistic: 'p99' }) },
          'p99 latency (ms)',
        ),
        threshold: thresholds.p99LatencyMs,
        description: `The slowest 1 % of API requests took ${thresholds.p99LatencyMs} ms or more. Check the functions' Duration and DynamoDB latency on the dashboard.`,
      }),
    ];
    this.addAlarm('ApiClientErrorRate', {
      metric: this.whenBusy(
        api,
        '100 * FILL(clientErrors, 0) / requests',
        { clientErrors: api.metricClientError(apiMetric) },
        '4xx responses (%)',
      ),
      threshold: thresholds.clientErrorRatePercent,
      description:
        `${thresholds.clientErrorRatePercent} % or more of API requests answered with a 4xx: throttling (429, check the ` +
        'stage throttle), a 401 storm (refused authorizations by reason on the dashboard; a leaked or revoked key), or a broken client release.',
    });

    const slowMs = Math.round((FUNCTION_TIMEOUT_MS * thresholds.durationPercentOfTimeout) / 100);
    for (const [name, fn] of props.functions) {
      const errors = this.addAlarm(`${name}Errors`, {
        metric: fn.metricErrors({ period: this.period, statistic: 'Sum' }),
        threshold: thresholds.functionErrors,
        description: `The ${name} function failed with unhandled errors (crash, timeout or cold-start failure). Check its log group.`,
      });
      this.functionErrorAlarms.set(name, errors);
      this.addAlarm(`${name}Throttles`, {
        metric: fn.metricThrottles({ period: this.period, statistic: 'Sum' }),
        threshold: thresholds.functionThrottles,
        description: `Lambda throttled the ${name} function: the account's concurrency is exhausted. Clients get 5xx.`,
      });
      this.addAlarm(`${name}NearTimeout`, {
        metric: fn.metricDuration({ period: this.period, statistic: 'Maximum' }),
        threshold: slowMs,
        description: `The ${name} function ran ${slowMs} ms or more, ${thresholds.durationPercentOfTimeout} % of its ${FUNCTION_TIMEOUT_MS} ms timeout: DynamoDB is slow or its calls are retrying. Next come timeouts.`,
      });
    }

    for (const [name, table] of props.tables) {
      this.addAlarm(`${name}ThrottledRequests`, {
        metric: table.metricThrottledRequestsForOperations({ operations: WATCHED_OPERATIONS, period: this.period }),
        threshold: thresholds.dynamoDbThrottledRequests,
        description: `DynamoDB throttled requests on the ${name} table. Clients get 503 once the SDK's retries are exhausted.`,
      });
    }
  }

  /** The alarms that roll back a deployment of one function: its own errors and the API's 5xx rate and latency. */
  rollbackAlarmsFor(functionName: string): IAlarm[] {
    const errors = this.functionErrorAlarms.get(functionName);
    if (!errors) throw new Error(`No alarms for function ${functionName}`);
    return [errors, ...this.apiAlarms];
  }

  /**
   * A metric that only counts once the API served `minimumRequests` in the period: below that a rate
   * or a percentile is noise (0 then, which never breaches).
   */
  private whenBusy(api: HttpApi, expression: string, metrics: Record<string, IMetric>, label: string): MathExpression {
    return new MathExpression({
      expression: `IF(requests >= ${this.thresholds.minimumRequests}, ${expression}, 0)`,
      usingMetrics: { ...metrics, requests: api.metricCount({ period: this.period, statistic: 'Sum' }) },
      period: this.period,
      label,
    });
  }

  private addAlarm(id: string, options: { metric: IMetric; threshold: number; description: string }): Alarm {
    const alarm = new Alarm(this, id, {
      metric: options.metric,
      threshold: options.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: this.thresholds.evaluationPeriods,
      datapointsToAlarm: this.thresholds.datapointsToAlarm,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    for (const target of this.targets) {
      alarm.addAlarmAction(new SnsAction(target));
      alarm.addOkAction(new SnsAction(target));
    }
    this.alarms.push(alarm);
    return alarm;
  }
}
