import { PETS_INDEXES } from '../helpers/pets-indexes';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAnimalStoreApp } from '../../infra/animal-store-app';
import { production, staging, stages, type StageConfig } from '../../infra/stages';
import { FUNCTION_TIMEOUT_MS } from '../../shared/facts/time-budget';
import { METRICS, metricsNamespace, REFUSAL_REASON_DIMENSION } from '../../shared/facts/metric-names';
import { REFUSAL_OUTCOMES } from '../../shared/domain/auth/authorizer-context';
import { API_KEYS_TABLE } from '../../shared/dynamodb/api-keys-table';
import { resourcesOfType, type SynthesizedStage } from '../../tools/lambda/synth';
import { synthesizedApp, type SharedSynthesis } from '../helpers/synthesized-app';

/** What ops meet after `cdk deploy`: where it lands, how traffic moves, who hears alarms, what they see. */

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

let synthesis: SharedSynthesis;
beforeAll(() => {
  synthesis = synthesizedApp();
});

function logicalId(stage: SynthesizedStage, construct: { node: { defaultChild?: unknown } }): string {
  return stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

describe('pinned environments', () => {
  it.each(stages)("deploys the $name stage only to the account and region of its config, whoever's credentials run the CLI", (config) => {
    const artifact = synthesis.assembly.getStackByName(config.stackName);
    // The CLI compares this environment with the credentials' account and refuses on a mismatch.
    expect(artifact.environment).toEqual(expect.objectContaining({ account: config.account, region: config.region }));
  });

  it('synthesizes the same templates whatever account and region the environment suggests', () => {
    const saved = { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION };
    const templates = (account: string, region: string) => {
      process.env.CDK_DEFAULT_ACCOUNT = account;
      process.env.CDK_DEFAULT_REGION = region;
      const outdir = mkdtempSync(join(tmpdir(), 'animal-store-env-'));
      try {
        const { app } = createAnimalStoreApp({ context: NO_BUNDLING, outdir });
        return app.synth().stacks.map((stack) => JSON.stringify(stack.template));
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    };
    try {
      expect(templates('999999999999', 'us-east-1')).toEqual(templates('888888888888', 'ap-southeast-2'));
    } finally {
      for (const [name, value] of [
        ['CDK_DEFAULT_ACCOUNT', saved.account],
        ['CDK_DEFAULT_REGION', saved.region],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe.each(stages)('gradual deploys in the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesis.stage(config.name);
  });

  it('hands every function to CodeDeploy through its live alias, which shifts 10 % of traffic for five minutes before the rest', () => {
    for (const [name, fn] of stage.stack.functions.byName) {
      const group = stage.stack.trafficShifting.deploymentGroups.get(name)!;
      const alias = stage.json.Resources[logicalId(stage, fn.alias)]! as { UpdatePolicy?: any };
      expect(alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.DeploymentGroupName, name).toEqual({ Ref: logicalId(stage, group) });
      const properties = stage.json.Resources[logicalId(stage, group)]!.Properties!;
      expect(properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
    }
  });

  it("rolls a function back by itself only on its own new version's alarms, or when the deployment fails", () => {
    for (const [name] of stage.stack.functions.byName) {
      const group = stage.json.Resources[logicalId(stage, stage.stack.trafficShifting.deploymentGroups.get(name)!)]!;
      expect(group.Properties!.AutoRollbackConfiguration).toEqual({
        Enabled: true,
        Events: expect.arrayContaining(['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_REQUEST', 'DEPLOYMENT_STOP_ON_ALARM']),
      });
      const alarmNames = group.Properties!.AlarmConfiguration.Alarms.map((alarm: { Name: unknown }) => JSON.stringify(alarm.Name));
      const own = stage.stack.versionAlarms.byFunction.get(name)!.map((alarm) => JSON.stringify({ Ref: logicalId(stage, alarm) }));
      expect(alarmNames.sort(), name).toEqual(own.sort());
      const ids = own.map((ref) => (JSON.parse(ref) as { Ref: string }).Ref).join();
      expect(ids, name).toContain(`${name}NewVersionFailures`);
      expect(ids, name).toContain(`${name}NewVersionLatency`);
      expect(ids, name).not.toMatch(/Api|Errors/);
    }
  });
});

describe('traffic shifting per stage', () => {
  it('moves both stages by the same canary, so staging rehearses what production does, in the templates CloudFormation gets', () => {
    const configsOf = (config: StageConfig) =>
      Object.values(resourcesOfType(synthesis.stage(config.name).json, 'AWS::CodeDeploy::DeploymentGroup')).map((group) =>
        JSON.stringify(group.Properties?.DeploymentConfigName),
      );
    const productionConfigs = configsOf(production);
    expect(productionConfigs.length).toBeGreaterThan(0);
    for (const name of productionConfigs) expect(name).toMatch(/Canary|Linear/);
    expect(configsOf(staging)).toEqual(productionConfigs);
  });

  it('lets every rollback alarm of a gradual deploy fire before its first step ends, so a bad version never takes all traffic', () => {
    let gradual = 0;
    for (const config of stages) {
      const { json } = synthesis.stage(config.name);
      for (const [id, group] of Object.entries(resourcesOfType(json, 'AWS::CodeDeploy::DeploymentGroup'))) {
        const stepSeconds = firstStepSeconds(group.Properties!.DeploymentConfigName);
        if (stepSeconds === undefined) continue;
        gradual++;
        for (const { Name } of group.Properties!.AlarmConfiguration.Alarms as Array<{ Name: { Ref: string } }>) {
          const alarm = json.Resources[Name.Ref]!.Properties!;
          const periods: number[] = alarm.Period ? [alarm.Period] : alarm.Metrics.flatMap((m: any) => m.MetricStat?.Period ?? []);
          const soonestSeconds = Math.max(...periods) * (alarm.DatapointsToAlarm ?? alarm.EvaluationPeriods);
          expect(soonestSeconds, `${config.name} ${id}: ${Name.Ref}`).toBeLessThan(stepSeconds);
        }
      }
    }
    expect(gradual, 'no stage deploys gradually').toBeGreaterThan(0);
  });
});

/**
 * How long a Lambda deployment configuration holds its first share of traffic before moving on, in
 * seconds; undefined for one that moves all traffic at once.
 */
function firstStepSeconds(configName: unknown): number | undefined {
  if (configName === 'CodeDeployDefault.LambdaAllAtOnce') return undefined;
  const step = /^CodeDeployDefault\.Lambda(?:Canary\d+Percent|Linear\d+PercentEvery)(\d+)Minutes?$/.exec(String(configName));
  if (!step) throw new Error(`Teach firstStepSeconds the deployment configuration ${JSON.stringify(configName)}`);
  return Number(step[1]) * 60;
}

describe.each(stages)('alarms of the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesis.stage(config.name);
  });

  function alarms() {
    return Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Alarm'));
  }

  it('notify the stage’s topic when they fire and when they clear, every one of them', () => {
    const topic = { Ref: logicalId(stage, stage.stack.monitoring.topic) };
    expect(alarms().length).toBeGreaterThan(0);
    for (const alarm of alarms()) {
      expect(alarm.Properties!.AlarmActions).toContainEqual(topic);
      expect(alarm.Properties!.OKActions).toContainEqual(topic);
    }
  });

  it('watch the 4xx rate (throttling, 401 storms) and p99 latency, once the API is busy enough for them to mean something', () => {
    const expressions = alarms().flatMap((alarm) => (alarm.Properties!.Metrics ?? []).map((m: { Expression?: string }) => m.Expression));
    const busy = `IF(requests >= ${config.alarms.minimumRequests}`;
    expect(expressions).toContain(`${busy}, 100 * FILL(clientErrors, 0) / requests, 0)`);
    expect(expressions).toContain(`${busy}, latency, 0)`);
    const latency = alarms().find((alarm) => JSON.stringify(alarm.Properties!.Metrics ?? []).includes('"p99"'));
    expect(latency!.Properties!.Threshold).toBe(config.alarms.p99LatencyMs);
  });

  it('warn before a function times out: its maximum duration passes the stage’s share of the timeout', () => {
    const threshold = (FUNCTION_TIMEOUT_MS * config.alarms.durationPercentOfTimeout) / 100;
    const nearTimeout = alarms().filter((alarm) => alarm.Properties!.MetricName === 'Duration');
    expect(nearTimeout).toHaveLength(stage.stack.functions.all.length);
    for (const alarm of nearTimeout) {
      expect(alarm.Properties!).toEqual(expect.objectContaining({ Statistic: 'Maximum', Threshold: threshold }));
    }
  });

  it("watch the authorizer's errors and throttles, since it fronts every route", () => {
    const authorizer = { Ref: logicalId(stage, stage.stack.functions.of('authorizer').function) };
    const watched = alarms()
      .filter((alarm) => JSON.stringify(alarm.Properties!.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: authorizer }]))
      .map((alarm) => alarm.Properties!.MetricName);
    expect(watched.sort()).toEqual(['Duration', 'Errors', 'Throttles']);
  });
});

describe('alarm subscriptions', () => {
  it('page the production on-call address configured in infra/stages.ts', () => {
    const { template } = synthesis.stage(production.name);
    const [subscription] = production.alarmSubscriptions;
    expect(subscription).toBeDefined();
    if (subscription && 'email' in subscription) {
      template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: subscription.email });
    }
  });

  it('must exist for production: synthesis fails, saying what to set, when there is none', () => {
    const unpaged: StageConfig = { ...production, alarmSubscriptions: [] };
    expect(() => createAnimalStoreApp({ stages: [unpaged], context: NO_BUNDLING })).toThrow(
      /set alarmSubscriptions of production in infra\/stages\.ts/,
    );
  });
});

describe.each(stages)('what the $name stage shows and logs', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesis.stage(config.name);
  });

  it('has a dashboard of the API, every function, every table and the business metrics, in the stage’s namespace', () => {
    const [dashboard] = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties!.DashboardBody);
    for (const title of [
      'Requests',
      '4xx',
      '5xx',
      'Latency',
      'Duration',
      'Errors',
      'Throttles',
      'Concurrent executions',
      'Consumed read capacity',
      'Throttle events',
    ]) {
      expect(body).toContain(title);
    }
    for (const metric of Object.values(METRICS)) expect(body).toContain(metric);
    expect(body).toContain(metricsNamespace(config.name));
    for (const fn of stage.stack.functions.all) expect(body).toContain(logicalId(stage, fn.function));
  });

  it("counts the authorizer's refusals by reason from the access log, in the stage's namespace, and graphs each reason", () => {
    const filter = stage.json.Resources[logicalId(stage, stage.stack.monitoring.authorizationsRefused)]!;
    expect(filter.Properties).toEqual({
      LogGroupName: { Ref: logicalId(stage, stage.stack.api.accessLogs) },
      FilterPattern: `{ ${REFUSAL_OUTCOMES.map((reason) => `($.authorizerOutcome = "${reason}")`).join(' || ')} }`,
      MetricTransformations: [
        {
          MetricNamespace: metricsNamespace(config.name),
          MetricName: METRICS.authorizationsRefused,
          MetricValue: '1',
          Dimensions: [{ Key: REFUSAL_REASON_DIMENSION, Value: '$.authorizerOutcome' }],
          Unit: 'Count',
        },
      ],
    });
    const [dashboard] = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Dashboard'));
    expect(JSON.stringify(dashboard!.Properties!.DashboardBody)).toContain(
      `SEARCH('{${metricsNamespace(config.name)},${REFUSAL_REASON_DIMENSION}} MetricName=`,
    );
  });

  it("graphs each index's consumed read and write capacity and read and write throttles, by table and index name", () => {
    const [dashboard] = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Dashboard'));
    const graphed = indexMetricsOf(dashboard!.Properties!.DashboardBody);
    const pets = logicalId(stage, stage.stack.petsTable.table);
    const keys = logicalId(stage, stage.stack.apiKeysTable.table);
    const indexes = [...PETS_INDEXES.map((index) => [pets, index.name]), [keys, API_KEYS_TABLE.byKeyIdIndex.name]];
    const expected = indexes.flatMap(([table, index]) =>
      ['ConsumedReadCapacityUnits', 'ConsumedWriteCapacityUnits', 'ReadThrottleEvents', 'WriteThrottleEvents'].map(
        (metric) => `${metric} ${table} ${index}`,
      ),
    );
    expect(graphed.sort()).toEqual(expected.sort());
  });

  it("raises no alarm of an index's own: the table's throttled-requests alarm counts the requests an index throttles", () => {
    const alarms = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Alarm'));
    expect(JSON.stringify(alarms)).not.toContain('GlobalSecondaryIndexName');
    const pets = logicalId(stage, stage.stack.petsTable.table);
    const throttled = alarms.filter((alarm) => JSON.stringify(alarm).includes('ThrottledRequests') && JSON.stringify(alarm).includes(pets));
    expect(JSON.stringify(throttled)).toContain('"Query"');
    expect(JSON.stringify(throttled)).toContain('"PutItem"');
  });

  it('logs every function as JSON at the stage’s level, and of Lambda’s own lines only warnings and errors, with metrics in the stage’s namespace', () => {
    for (const fn of stage.stack.functions.all) {
      const properties = stage.json.Resources[logicalId(stage, fn.function)]!.Properties!;
      // WARN: no platform.start or platform.report per invocation, which would double a request's log bytes.
      expect(properties.LoggingConfig).toEqual(
        expect.objectContaining({ LogFormat: 'JSON', ApplicationLogLevel: config.logLevel, SystemLogLevel: 'WARN' }),
      );
      expect(properties.Environment.Variables.POWERTOOLS_METRICS_NAMESPACE).toBe(metricsNamespace(config.name));
    }
  });
});

describe.each(stages)('stateful resources of the $name stage', (config: StageConfig) => {
  // A changed logical id makes CloudFormation create a new, empty resource and drop (or orphan) the
  // old one: production would silently move onto an empty table. If this fails after a refactoring,
  // keep the old id with `overrideLogicalId` rather than updating this list.
  const PINNED = {
    petsTable: 'PetsTable42325518',
    apiKeysTable: 'ApiKeysTable10D26ED3',
    idempotencyTable: 'IdempotencyTable48612DF4',
    cursorSecret: 'CursorSecret12D87B4E',
    // Holds the key an operator stored for the synthetic probe: a new id would be a new secret holding the placeholder.
    probeApiKeySecret: 'SyntheticProbeApiKeyF3388705',
  };

  it('keep the logical ids the deployed stacks hold their data under', () => {
    const { json } = synthesis.stage(config.name);
    const ids = (type: string) => Object.keys(resourcesOfType(json, type)).sort();
    expect(ids('AWS::DynamoDB::GlobalTable')).toEqual([PINNED.apiKeysTable, PINNED.idempotencyTable, PINNED.petsTable]);
    expect(ids('AWS::SecretsManager::Secret')).toEqual([PINNED.cursorSecret, PINNED.probeApiKeySecret]);
  });

  it("keep writing the probe key secret's placeholder they were created with, so a deploy never overwrites the stored key", () => {
    // CloudFormation writes SecretString again whenever the template's value changes: over the operator's key.
    const secret = resourcesOfType(synthesis.stage(config.name).json, 'AWS::SecretsManager::Secret')[PINNED.probeApiKeySecret]!;
    expect(secret.Properties!.SecretString).toBe(
      'not-configured: store an API key of this stage here (docs/operations.md, "Synthetic probe")',
    );
  });
});

describe.each(stages)('operator policies of the $name stage', (config: StageConfig) => {
  it('exports a managed policy with exactly what `npm run keys -- --stage` does, on this stage’s keys table and stack', () => {
    const stage = synthesis.stage(config.name);
    const policy = stage.json.Resources[logicalId(stage, stage.stack.keyAdministrationPolicy)]!;
    const table = { 'Fn::GetAtt': [logicalId(stage, stage.stack.apiKeysTable.table), 'Arn'] };
    expect(policy.Properties!.PolicyDocument.Statement).toEqual([
      { Effect: 'Allow', Action: ['dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'], Resource: table },
      { Effect: 'Allow', Action: 'dynamodb:Query', Resource: { 'Fn::Join': ['', [table, expect.stringMatching(/^\/index\//)]] } },
      { Effect: 'Allow', Action: 'cloudformation:DescribeStacks', Resource: { Ref: 'AWS::StackId' } },
    ]);
  });

  it('exports a managed policy for `npm run smoke -- --stage`: read the outputs, delete a pet, nothing else', () => {
    const stage = synthesis.stage(config.name);
    const policy = stage.json.Resources[logicalId(stage, stage.stack.smokeTestPolicy)]!;
    expect(policy.Properties!.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: 'dynamodb:DeleteItem',
        Resource: { 'Fn::GetAtt': [logicalId(stage, stage.stack.petsTable.table), 'Arn'] },
      },
      { Effect: 'Allow', Action: 'cloudformation:DescribeStacks', Resource: { Ref: 'AWS::StackId' } },
    ]);
    expect(stage.json.Outputs!.SmokeTestPolicyArn!.Value).toEqual({ Ref: logicalId(stage, stage.stack.smokeTestPolicy) });
  });
});

/**
 * The index metrics a dashboard body draws, as `<metric> <table's logical id> <index>`: the body is a
 * Fn::Join of JSON text and references, read back as JSON with each reference replaced by its logical id.
 */
function indexMetricsOf(body: unknown): string[] {
  const [, parts] = (body as { 'Fn::Join': [string, unknown[]] })['Fn::Join'];
  const text = parts.map((part) => (typeof part === 'string' ? part : ((part as { Ref?: string }).Ref ?? '?'))).join('');
  const widgets = (JSON.parse(text) as { widgets: Array<{ properties: { metrics?: unknown[][] } }> }).widgets;
  return widgets
    .flatMap((widget) => widget.properties.metrics ?? [])
    .filter((metric) => metric.includes('GlobalSecondaryIndexName'))
    .map((metric) => {
      const dimension = (name: string) => metric[metric.indexOf(name) + 1];
      return `${metric[1]} ${dimension('TableName')} ${dimension('GlobalSecondaryIndexName')}`;
    });
}
