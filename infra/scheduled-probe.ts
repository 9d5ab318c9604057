import { Duration, SecretValue, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData, type IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { ENV } from '../shared/facts/environment';
import { PROBE_METRICS, SERVICE_DIMENSION } from '../shared/facts/metric-names';
import { SERVICE_NAME } from '../shared/facts/service';
import { PROBE_FUNCTION_TIMEOUT_MS, PROBE_KEY_PLACEHOLDER } from '../shared/facts/probe-settings';
import { environmentOf, functionDefaults, type LogLevel } from './api-function';
import { refuseInvalidConfig } from './config-refusal';

export interface SyntheticProbeProps {
  /** The stage's base URL, ending in /v1: the probe calls exactly what clients call. */
  readonly baseUrl: string;
  /** How often the probe runs; also the alarm's period, so every period holds one run. */
  readonly interval: Duration;
  /** Periods failed or without a run, out of `evaluationPeriods`, that raise the alarm. */
  readonly datapointsToAlarm: number;
  /** Periods the alarm looks back over. */
  readonly evaluationPeriods: number;
  /** What the alarm notifies when it fires and when it clears: the stage's alarm topics. */
  readonly alarmActions: readonly IAlarmAction[];
  /** CloudWatch namespace of the probe's metrics: the stage's. */
  readonly metricsNamespace: string;
  /** Memory of the probe function, in MB. */
  readonly memoryMiB: number;
  /** Application log level of the probe function. */
  readonly logLevel: LogLevel;
  /** Retention of the probe's log group. */
  readonly logRetention: RetentionDays;
  /** What happens to the key secret and the log group when they leave the stack. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The stage's synthetic probe (functions/synthetic-probe/probe-run.ts) on an EventBridge Scheduler schedule, with its
 * key secret and its alarm, which also fires when runs stop, since a probe that does not run watches nothing.
 */
export class SyntheticProbe extends Construct {
  /** Holds the probe's API key: the stack writes the placeholder, an operator the key. */
  readonly apiKeySecret: Secret;
  readonly function: NodejsFunction;
  readonly role: Role;
  readonly logGroup: LogGroup;
  readonly schedule: Schedule;
  /** What EventBridge Scheduler assumes to invoke the function. */
  readonly schedulerRole: Role;
  /** Fires when runs fail or stop. */
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: SyntheticProbeProps) {
    super(scope, id);

    this.apiKeySecret = new Secret(this, 'ApiKey', {
      description: 'API key of the synthetic probe: create one with npm run keys and store it here (docs/operations.md).',
      // A fixed value: CloudFormation leaves the secret alone while it does not change, so the operator's key stays.
      secretStringValue: SecretValue.unsafePlainText(PROBE_KEY_PLACEHOLDER),
      removalPolicy: props.removalPolicy,
    });
    Validations.of(this.apiKeySecret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The secret holds an API key of this stage, issued by an operator with npm run keys (stored only as a hash in ' +
        'the keys table): Secrets Manager cannot mint one, so a rotation function would have to issue, store and revoke ' +
        'keys itself. The key is rotated by hand like any client key (docs/operations.md, "Synthetic probe").',
    });

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);
    this.role.addToPolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [this.apiKeySecret.secretArn] }));

    const environment = environmentOf('syntheticProbe', {
      [ENV.logLevel]: props.logLevel,
      [ENV.metricsNamespace]: props.metricsNamespace,
      [ENV.probeBaseUrl]: props.baseUrl,
      [ENV.probeApiKeySecret]: this.apiKeySecret.secretArn,
    });
    this.function = new NodejsFunction(this, 'Function', {
      ...functionDefaults('syntheticProbe', props.logLevel),
      memorySize: props.memoryMiB,
      timeout: Duration.millis(PROBE_FUNCTION_TIMEOUT_MS),
      role: this.role,
      logGroup: this.logGroup,
      environment,
    });
    refuseInvalidConfig(this.function, FUNCTION_CONFIG.syntheticProbe, environment);
    // A run that crashed is not run again: a late second run would fill the period the first left
    // empty, and the alarm would miss the crash.
    this.function.configureAsyncInvoke({ retryAttempts: 0, maxEventAge: Duration.minutes(1) });
    const fn = Validations.of(this.function);
    fn.acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Only the schedule invokes it, with an empty event: a failed run has nothing worth redelivering, and the ' +
        "probe's alarm already sees it (ProbeSuccess 0, or no data at all, which it treats as breaching).",
    });
    fn.acknowledge({
      id: 'Serverless-LambdaAsyncFailureDestination',
      reason:
        'A failed invocation of the probe is a scheduled tick that did not probe: the next one comes within the ' +
        "interval, and the probe's alarm treats the missing run as a failure. A destination would hold empty events.",
    });
    fn.acknowledge({
      id: 'Serverless-LambdaTracing',
      reason:
        'The probe logs each step with its time and publishes ProbeLatency; the API it calls cannot continue an X-Ray ' +
        'trace (HTTP APIs do not propagate one), and tracing would add a wildcard grant to a role that may otherwise only read one secret.',
    });

    // Scheduler assumes this role only on behalf of schedules of this account's default group.
    const stack = Stack.of(this);
    this.schedulerRole = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: {
            'aws:SourceAccount': stack.account,
            'aws:SourceArn': stack.formatArn({ service: 'scheduler', resource: 'schedule-group', resourceName: 'default' }),
          },
        },
      }),
    });
    this.schedule = new Schedule(this, 'Schedule', {
      description: `Runs the synthetic probe of ${stack.stackName}.`,
      schedule: ScheduleExpression.rate(props.interval),
      // $LATEST by name, so the role may invoke exactly that, not every version and alias. A late tick is
      // dropped, not retried: see configureAsyncInvoke.
      target: new LambdaInvoke(this.function.latestVersion, {
        role: this.schedulerRole,
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      }),
    });

    this.alarm = new Alarm(this, 'Alarm', {
      metric: new Metric({
        namespace: props.metricsNamespace,
        metricName: PROBE_METRICS.success,
        dimensionsMap: { [SERVICE_DIMENSION]: SERVICE_NAME },
        // One failed run in a period makes the period fail.
        statistic: 'Minimum',
        period: props.interval,
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: props.evaluationPeriods,
      datapointsToAlarm: props.datapointsToAlarm,
      // No run, no data: the schedule, the function or its key is broken, and nothing watches the stage.
      treatMissingData: TreatMissingData.BREACHING,
      alarmDescription:
        `The synthetic probe failed, or did not run, in ${props.datapointsToAlarm} of the last ${props.evaluationPeriods} ` +
        `periods of ${props.interval.toHumanString()}: the API may be down with nobody calling it. Read the probe's log: a ` +
        "failed step names what broke; 'not configured' means no API key is stored in its secret (stack output " +
        'ProbeApiKeySecretArn); no run at all, check its schedule and function. Runbook: docs/operations.md, "Synthetic probe".',
    });
    for (const action of props.alarmActions) {
      this.alarm.addAlarmAction(action);
      this.alarm.addOkAction(action);
    }
  }
}
