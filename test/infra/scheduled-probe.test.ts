import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Duration, RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stages, type StageConfig } from '../../infra/stages';
import { SyntheticProbe, type SyntheticProbeProps } from '../../infra/scheduled-probe';
import { ENV } from '../../shared/facts/environment';
import { metricsNamespace, PROBE_METRICS, SERVICE_DIMENSION } from '../../shared/facts/metric-names';
import { SERVICE_NAME } from '../../shared/facts/service';
import { PROBE_FUNCTION_TIMEOUT_MS, PROBE_KEY_PLACEHOLDER } from '../../shared/facts/probe-settings';
import { invokeBundle, runtimeNode } from '../../tools/lambda/lambda-runner';
import { resourcesOfType, type CfnTemplate, type SynthesizedStage } from '../../tools/lambda/synth';
import { synthesizedStage } from '../helpers/synthesized-app';
import { startFakeSecretsManager, type FakeSecretsManager } from '../helpers/fake-secrets-manager';
import { startTestApi, type TestApi } from '../helpers/local-api';

/** The probe on a bare stack, every prop given, its alarm notifying one topic. */
function bareProbe(options: { bundle: boolean; props?: Partial<SyntheticProbeProps> }) {
  const outdir = mkdtempSync(join(tmpdir(), 'animal-store-probe-'));
  const app = new App({
    outdir,
    context: { 'aws:cdk:enable-asset-metadata': true, ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) },
  });
  const stack = new Stack(app, 'Bare');
  const topic = new Topic(stack, 'Alarms');
  const probe = new SyntheticProbe(stack, 'Probe', {
    baseUrl: 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1',
    interval: Duration.minutes(1),
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
    alarmActions: [new SnsAction(topic)],
    metricsNamespace: 'AnimalStore/bare',
    memoryMiB: 256,
    logLevel: 'INFO',
    logRetention: RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    ...options.props,
  });
  const json = app.synth().getStackByName('Bare').template as CfnTemplate;
  const id = (construct: IConstruct) => stack.getLogicalId(construct.node.defaultChild as CfnElement);
  return {
    outdir,
    stack,
    topic,
    probe,
    json,
    template: Template.fromJSON(json),
    id,
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}

type Built = Pick<ReturnType<typeof bareProbe>, 'json' | 'id' | 'probe'>;

/** Every statement of the policies attached to a role. */
function statementsOf({ json, id }: Built, role: IConstruct): unknown[] {
  return Object.values(resourcesOfType(json, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties!.Roles) === JSON.stringify([{ Ref: id(role) }]))
    .flatMap((policy) => policy.Properties!.PolicyDocument.Statement as unknown[]);
}

/** What the probe function may do: write its own log group and read its one secret, nothing else. */
function expectProbeRoleExactly(built: Built): void {
  const { probe, id } = built;
  expect(statementsOf(built, probe.role)).toEqual([
    { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: { 'Fn::GetAtt': [id(probe.logGroup), 'Arn'] } },
    { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: { Ref: id(probe.apiKeySecret) } },
  ]);
  const role = built.json.Resources[id(probe.role)]!;
  expect(role.Properties!.ManagedPolicyArns).toBeUndefined();
  expect(role.Properties!.Policies).toBeUndefined();
  expect(role.Properties!.AssumeRolePolicyDocument.Statement).toEqual([
    { Action: 'sts:AssumeRole', Effect: 'Allow', Principal: { Service: 'lambda.amazonaws.com' } },
  ]);
}

/** What Scheduler may do with its role: invoke the probe's $LATEST, nothing else, for this account's schedules only. */
function expectSchedulerRoleExactly(built: Built): void {
  const { probe, id } = built;
  expect(statementsOf(built, probe.schedulerRole)).toEqual([
    {
      Effect: 'Allow',
      Action: 'lambda:InvokeFunction',
      Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [id(probe.function), 'Arn'] }, ':$LATEST']] },
    },
  ]);
  const [trust] = built.json.Resources[id(probe.schedulerRole)]!.Properties!.AssumeRolePolicyDocument.Statement;
  expect(trust).toEqual(
    expect.objectContaining({
      Principal: { Service: 'scheduler.amazonaws.com' },
      Condition: { StringEquals: { 'aws:SourceAccount': expect.anything(), 'aws:SourceArn': expect.anything() } },
    }),
  );
  expect(JSON.stringify(trust.Condition.StringEquals['aws:SourceArn'])).toContain(':schedule-group/default');
}

describe('the SyntheticProbe construct on a bare stack', () => {
  let built: ReturnType<typeof bareProbe>;
  beforeAll(() => {
    built = bareProbe({ bundle: false });
  });
  afterAll(() => built?.dispose());

  function fn() {
    return built.json.Resources[built.id(built.probe.function)]!.Properties!;
  }

  it('runs the function on the interval, through EventBridge Scheduler, with its own role, and never late or twice', () => {
    const { template, id, probe } = built;
    template.resourceCountIs('AWS::Scheduler::Schedule', 1);
    template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
      Target: {
        Arn: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [id(probe.function), 'Arn'] }, ':$LATEST']] },
        RoleArn: { 'Fn::GetAtt': [id(probe.schedulerRole), 'Arn'] },
        RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: id(probe.function) },
      Qualifier: '$LATEST',
      MaximumRetryAttempts: 0,
    });
  });

  it('runs every five minutes when told to', () => {
    const every5 = bareProbe({ bundle: false, props: { interval: Duration.minutes(5) } });
    try {
      every5.template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'rate(5 minutes)' });
      every5.template.hasResourceProperties('AWS::CloudWatch::Alarm', { Period: 300 });
    } finally {
      every5.dispose();
    }
  });

  it('lets the function read its one secret and write its own log group, nothing else', () => {
    expectProbeRoleExactly(built);
  });

  it('lets Scheduler invoke the function and nothing else, for this account’s schedules only', () => {
    expectSchedulerRoleExactly(built);
  });

  it('hands the function the base URL, its secret, the namespace and the log level, on Node.js 24 arm64 within its timeout', () => {
    const { id, probe } = built;
    expect(fn().Environment.Variables).toEqual({
      [ENV.probeBaseUrl]: 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1',
      [ENV.probeApiKeySecret]: { Ref: id(probe.apiKeySecret) },
      [ENV.metricsNamespace]: 'AnimalStore/bare',
      [ENV.logLevel]: 'INFO',
    });
    expect(fn()).toEqual(
      expect.objectContaining({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Timeout: PROBE_FUNCTION_TIMEOUT_MS / 1000,
        LoggingConfig: expect.objectContaining({ LogFormat: 'JSON', LogGroup: { Ref: id(probe.logGroup) } }),
      }),
    );
  });

  it('creates the key secret holding the placeholder, kept as the stage keeps its data', () => {
    const secret = built.json.Resources[built.id(built.probe.apiKeySecret)]!;
    expect(secret.Properties!.SecretString).toBe(PROBE_KEY_PLACEHOLDER);
    expect(secret.Properties!.GenerateSecretString).toBeUndefined();
    expect(secret).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
  });

  it('alarms when a run fails and when runs are missing, per interval, notifying the actions when it fires and clears', () => {
    const { template, topic, id } = built;
    template.resourceCountIs('AWS::CloudWatch::Alarm', 1);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AnimalStore/bare',
      MetricName: PROBE_METRICS.success,
      Dimensions: [{ Name: SERVICE_DIMENSION, Value: SERVICE_NAME }],
      Statistic: 'Minimum',
      Period: 60,
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: 3,
      DatapointsToAlarm: 2,
      TreatMissingData: 'breaching',
      AlarmActions: [{ Ref: id(topic) }],
      OKActions: [{ Ref: id(topic) }],
    });
  });
});

describe('the synthetic probe bundle', () => {
  const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:ProbeApiKey-AbCdEf';
  let built: ReturnType<typeof bareProbe>;
  let api: TestApi;
  let secrets: FakeSecretsManager;
  let taskRoot: string;
  beforeAll(async () => {
    built = bareProbe({ bundle: true });
    taskRoot = join(built.outdir, built.json.Resources[built.id(built.probe.function)]!.Metadata!['aws:asset:path']);
    api = await startTestApi();
    secrets = await startFakeSecretsManager({ [SECRET_ARN]: api.apiKey });
  });
  afterAll(async () => {
    await secrets?.close();
    await api?.close();
    built?.dispose();
  });

  function sources(): string[] {
    return (JSON.parse(readFileSync(join(taskRoot, 'index.js.map'), 'utf8')) as { sources: string[] }).sources;
  }

  it('ships only the probe: its checks, the client they call through, the runtime, the schemas it checks answers with and the Secrets Manager client', () => {
    expect(readdirSync(taskRoot).sort()).toEqual(['index.js', 'index.js.map']);
    const ours = sources().filter((source) => /^(?:functions|shared)\//.test(source));
    expect(ours).toContain('functions/synthetic-probe.ts');
    for (const source of ours)
      expect(source).toMatch(
        /^(?:functions\/synthetic-probe(?:\.ts$|\/)|shared\/(?:checks|client|runtime|facts|domain\/pets|domain\/validation|http\/error-schema))/,
      );
    const packages = new Set(sources().flatMap((source) => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source)?.[1] ?? []));
    expect(packages).toContain('@aws-sdk/client-secrets-manager');
    expect([...packages].filter((name) => /dynamodb|cloudformation/.test(name))).toEqual([]);
  });

  /** The bundle, loaded as Lambda loads it, invoked once by the schedule's empty event. */
  async function invokeWith(secret: string) {
    secrets.secrets.set(SECRET_ARN, secret);
    const invocation = await invokeBundle(runtimeNode(), {
      taskRoot,
      events: [{}],
      env: {
        PATH: '/usr/local/bin:/usr/bin:/bin',
        TZ: ':UTC',
        LAMBDA_TASK_ROOT: taskRoot,
        AWS_LAMBDA_FUNCTION_NAME: 'Bare-SyntheticProbe',
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'bundle-check',
        AWS_SECRET_ACCESS_KEY: 'bundle-check',
        AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
        FUNCTION_TIMEOUT_MS: String(PROBE_FUNCTION_TIMEOUT_MS),
        [ENV.logLevel]: 'INFO',
        [ENV.metricsNamespace]: 'AnimalStore/bundle-check',
        [ENV.probeBaseUrl]: api.baseUrl,
        [ENV.probeApiKeySecret]: SECRET_ARN,
      },
    });
    const lines = `${invocation.stdout}\n${invocation.stderr}`.split('\n').filter(Boolean);
    // Everything the function writes is a JSON log line or an EMF document.
    const entries = lines.map((line) => JSON.parse(line) as Record<string, any>);
    return { outcome: invocation.results[0], metrics: entries.filter((entry) => '_aws' in entry), text: lines.join('\n') };
  }

  it('probes the stage with the key it reads from Secrets Manager, and publishes its success', async () => {
    const { outcome, metrics, text } = await invokeWith(api.apiKey);
    expect(outcome.status).toBe('passed');
    expect(metrics).toEqual([expect.objectContaining({ [PROBE_METRICS.success]: 1, [PROBE_METRICS.latency]: outcome.latencyMs })]);
    expect(text).not.toContain(api.apiKey);
  });

  it('reports not configured while the secret holds the placeholder', async () => {
    const { outcome, metrics } = await invokeWith(PROBE_KEY_PLACEHOLDER);
    expect(outcome).toEqual({ status: 'not_configured' });
    expect(metrics).toEqual([expect.objectContaining({ [PROBE_METRICS.notConfigured]: 1 })]);
  });
});

describe.each(stages)('the synthetic probe of the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  let built: Built;
  beforeAll(() => {
    stage = synthesizedStage(config.name);
    built = {
      json: stage.json,
      probe: stage.stack.syntheticProbe,
      id: (construct) => stage.stack.getLogicalId(construct.node.defaultChild as CfnElement),
    };
  });

  it("calls the stage's own base URL, the BaseUrl output clients are given", () => {
    const variables = stage.json.Resources[built.id(built.probe.function)]!.Properties!.Environment.Variables;
    expect(variables[ENV.probeBaseUrl]).toEqual(stage.json.Outputs!.BaseUrl!.Value);
    expect(variables[ENV.metricsNamespace]).toBe(metricsNamespace(config.name));
  });

  it("runs once per alarm period of the stage, and alarms as the stage's other alarms count periods", () => {
    const { periodMinutes, evaluationPeriods, datapointsToAlarm } = config.alarms;
    stage.template.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: periodMinutes === 1 ? 'rate(1 minute)' : `rate(${periodMinutes} minutes)`,
    });
    const alarm = stage.json.Resources[built.id(built.probe.alarm)]!.Properties!;
    expect(alarm).toEqual(
      expect.objectContaining({
        MetricName: PROBE_METRICS.success,
        Namespace: metricsNamespace(config.name),
        Period: periodMinutes * 60,
        EvaluationPeriods: evaluationPeriods,
        DatapointsToAlarm: datapointsToAlarm,
        TreatMissingData: 'breaching',
      }),
    );
  });

  it("notifies the stage's alarm topic when it fires and when it clears", () => {
    const alarm = stage.json.Resources[built.id(built.probe.alarm)]!.Properties!;
    const topic = { Ref: built.id(stage.stack.monitoring.topic) };
    expect(alarm.AlarmActions).toEqual([topic]);
    expect(alarm.OKActions).toEqual([topic]);
  });

  it('lets the function read its one secret and write its own log group, and Scheduler only invoke it', () => {
    expectProbeRoleExactly(built);
    expectSchedulerRoleExactly(built);
  });

  it('tells operators where to store the key: the ProbeApiKeySecretArn output', () => {
    expect(stage.json.Outputs!.ProbeApiKeySecretArn!.Value).toEqual({ Ref: built.id(built.probe.apiKeySecret) });
  });

  it('heads the dashboard with the other alarms', () => {
    const [dashboard] = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Dashboard'));
    expect(JSON.stringify(dashboard!.Properties!.DashboardBody)).toContain(built.id(built.probe.alarm));
  });
});
