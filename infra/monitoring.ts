import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData, Unit, type IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { REFUSAL_OUTCOMES, type AuthorizerContext } from '../shared/domain/auth/authorizer-context';
import { METRICS, REFUSAL_REASON_DIMENSION } from '../shared/facts/metric-names';
import { AlarmTopic } from './alarm-topic';
import type { ACCESS_LOG_FIELDS } from './animal-store-http-api';
import type { AlarmSubscription, AlarmThresholds } from './stages';
import {
  ACCESS_LOG_WATCHES,
  API_WATCHES,
  FUNCTION_WATCHES,
  TABLE_WATCHES,
  type ApiAccessLog,
  type Watch,
  type WatchedResources,
} from './watched-metrics';

/** The access log's fields the 401 count reads (ACCESS_LOG_FIELDS): both strings, and the verdict of a request without a key. */
const STATUS_FIELD: keyof typeof ACCESS_LOG_FIELDS = 'status';
const VERDICT_FIELD: keyof typeof ACCESS_LOG_FIELDS = 'authorizerOutcome';
const NO_KEY: AuthorizerContext['outcome'] = 'missing';
const ACCEPTED: AuthorizerContext['outcome'] = 'allowed';

export interface MonitoringProps extends WatchedResources {
  /** When an alarm fires. */
  readonly thresholds: AlarmThresholds;
  /** Who the alarm topic notifies. */
  readonly subscriptions: readonly AlarmSubscription[];
  /** The API's access log, where its 401s are counted. */
  readonly accessLogs: ILogGroup;
  /** Namespace of the stage's business metrics (shared/facts/metric-names.ts), where refusals are counted. */
  readonly metricsNamespace: string;
}

/**
 * The stage's alarms, one for every watch with an alarm rule (infra/watched-metrics.ts), and the topic
 * they notify. Alarm names are generated, so two stages can share an account.
 */
export class Monitoring extends Construct {
  /** Every alarm of the stage. */
  readonly alarms: Alarm[] = [];
  /** Notified by every alarm; its subscriptions are the stage's `alarmSubscriptions`. */
  readonly topic: AlarmTopic;
  /** What every alarm of the stage does when it fires and when it clears: notify the topic and `subscriptions`' topics. */
  readonly alarmActions: readonly IAlarmAction[];
  /** Counts the API's 401s to requests that carried a key, which no metric of API Gateway's tells apart. */
  readonly keyedRefusals: MetricFilter;
  /** Counts the API's 401s to requests whose key the authorizer accepted: only a route version refusing valid keys answers one. */
  readonly acceptedKeyRefusals: MetricFilter;
  /** The API with what its access log counts, for the dashboard's graphs of the access-log alarms. */
  readonly accessLog: ApiAccessLog;
  /**
   * Counts the authorizer's refusals by reason from the access log, which already carries its verdict:
   * an EMF line from the authorizer would add to the log bytes of every refused request (docs/performance.md).
   */
  readonly authorizationsRefused: MetricFilter;
  private readonly thresholds: AlarmThresholds;
  private readonly period: Duration;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    this.thresholds = props.thresholds;
    this.period = Duration.minutes(props.thresholds.periodMinutes);

    this.topic = new AlarmTopic(this, 'AlarmTopic');
    const targets: ITopic[] = [this.topic];
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
      else targets.push(Topic.fromTopicArn(this, `ExistingTopic${index}`, subscription.topicArn));
    });
    this.alarmActions = targets.map((target) => new SnsAction(target));

    // Named after the stack, which is unique where its alarms live, as the stage's name is not known here.
    const accessLogNamespace = `${Stack.of(this).stackName}/AccessLog`;
    this.keyedRefusals = new MetricFilter(this, 'KeyedRefusals', {
      logGroup: props.accessLogs,
      filterPattern: FilterPattern.all(
        FilterPattern.stringValue(`$.${STATUS_FIELD}`, '=', '401'),
        FilterPattern.stringValue(`$.${VERDICT_FIELD}`, '!=', NO_KEY),
      ),
      metricNamespace: accessLogNamespace,
      metricName: 'KeyedRefusals',
      metricValue: '1',
      // Every minute with traffic has a value, so a rate over it never lacks its numerator.
      defaultValue: 0,
      unit: Unit.COUNT,
    });
    this.authorizationsRefused = new MetricFilter(this, 'AuthorizationsRefused', {
      logGroup: props.accessLogs,
      filterPattern: FilterPattern.any(...REFUSAL_OUTCOMES.map((reason) => FilterPattern.stringValue(`$.${VERDICT_FIELD}`, '=', reason))),
      metricNamespace: props.metricsNamespace,
      metricName: METRICS.authorizationsRefused,
      metricValue: '1',
      dimensions: { [REFUSAL_REASON_DIMENSION]: `$.${VERDICT_FIELD}` },
      unit: Unit.COUNT,
    });
    this.acceptedKeyRefusals = new MetricFilter(this, 'AcceptedKeyRefusals', {
      logGroup: props.accessLogs,
      filterPattern: FilterPattern.all(
        FilterPattern.stringValue(`$.${STATUS_FIELD}`, '=', '401'),
        FilterPattern.stringValue(`$.${VERDICT_FIELD}`, '=', ACCEPTED),
      ),
      metricNamespace: accessLogNamespace,
      metricName: 'AcceptedKeyRefusals',
      metricValue: '1',
      // No default: a minute without one has no data, which never breaches.
      unit: Unit.COUNT,
    });
    this.accessLog = {
      api: props.api,
      keyedRefusals: (period) => this.keyedRefusals.metric({ period, statistic: 'Sum' }),
      acceptedKeyRefusals: (period) => this.acceptedKeyRefusals.metric({ period, statistic: 'Sum' }),
    };
    this.addAlarms(new Map([['Api', props.api]]), API_WATCHES);
    this.addAlarms(new Map([['Api', this.accessLog]]), ACCESS_LOG_WATCHES);
    this.addAlarms(props.functions, FUNCTION_WATCHES);
    this.addAlarms(props.tables, TABLE_WATCHES);
  }

  /**
   * An alarm for each resource and each of its watches that has an alarm rule, notifying the topic when it
   * fires and when it clears. None rolls a deployment back: infra/version-alarms.ts judges deployments.
   */
  private addAlarms<TResource>(resources: ReadonlyMap<string, TResource>, watches: readonly Watch<TResource>[]): void {
    for (const [name, resource] of resources) {
      for (const { alarm: rule } of watches) {
        if (rule === undefined) continue;
        const alarm = new Alarm(this, `${name}${rule.id}`, {
          metric: rule.metric(resource, this.period, this.thresholds),
          threshold: rule.threshold(this.thresholds),
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: this.thresholds.evaluationPeriods,
          datapointsToAlarm: this.thresholds.datapointsToAlarm,
          treatMissingData: TreatMissingData.NOT_BREACHING,
          alarmDescription: rule.description(name, this.thresholds),
        });
        for (const action of this.alarmActions) {
          alarm.addAlarmAction(action);
          alarm.addOkAction(action);
        }
        this.alarms.push(alarm);
      }
    }
  }
}
