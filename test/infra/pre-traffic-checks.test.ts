import { App, RemovalPolicy, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LambdaApplication, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Alias, Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { PreTrafficChecks } from '../../infra/pre-traffic-checks';
import { stages, type StageConfig } from '../../infra/stages';
import { preTrafficHookTimeoutMs } from '../../functions/pre-traffic-hook/hook-time-budget';

import { ENV } from '../../shared/facts/environment';
import { resourcesOfType, type CfnTemplate, type SynthesizedStage } from '../../tools/lambda/synth';
import { grantsOf, statementsOfRole } from '../helpers/iam-statements';
import { synthesizedStage } from '../helpers/synthesized-app';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import { ApiKeysTable } from '../../infra/tables';

/** What CodeDeploy's pre-traffic hook is, may do and gates, in the templates CloudFormation gets. */

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

describe.each(stages)('the pre-traffic hook of the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesizedStage(config.name);
  });

  const id = (construct: IConstruct) => stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const arn = (construct: IConstruct) => ({ 'Fn::GetAtt': [id(construct), 'Arn'] });
  const hook = () => stage.stack.preTrafficChecks;

  it('runs before CodeDeploy moves any traffic to a new version of every function, and the bake after the shift', () => {
    const aliases = Object.values(resourcesOfType(stage.json, 'AWS::Lambda::Alias'));
    expect(aliases).toHaveLength(stage.stack.functions.all.length);
    for (const [name, fn] of stage.stack.functions.byName) {
      const update = (stage.json.Resources[id(fn.alias)] as { UpdatePolicy?: any }).UpdatePolicy.CodeDeployLambdaAliasUpdate;
      expect(update, name).toEqual({
        ApplicationName: expect.anything(),
        DeploymentGroupName: { Ref: id(stage.stack.trafficShifting.deploymentGroups.get(name)!) },
        BeforeAllowTrafficHook: { Ref: id(hook().function) },
        AfterAllowTrafficHook: { Ref: id(stage.stack.deploymentTraffic.function) },
      });
    }
  });

  it('is in place, permissions included, before any alias update starts a deployment that runs it', () => {
    const hookResources = [hook().function, hook().role, hook().role.node.findChild('DefaultPolicy')].map(id);
    const codeDeployRoles = new Set([...stage.stack.trafficShifting.deploymentGroups.values()].map((group) => group.role));
    const codeDeployGrants = [...codeDeployRoles].map((role) => id(role.node.findChild('DefaultPolicy')));
    for (const fn of stage.stack.functions.all) {
      const dependsOn = (stage.json.Resources[id(fn.alias)] as { DependsOn?: string[] }).DependsOn ?? [];
      expect(dependsOn, fn.node.id).toEqual(expect.arrayContaining([...hookResources, ...codeDeployGrants]));
    }
  });

  it('knows each function by the name its checks use, the keys table it issues the authorizer’s check key in and the traffic it starts, and is told nothing else', () => {
    const variables = stage.json.Resources[id(hook().function)]!.Properties!.Environment.Variables;
    expect(Object.keys(variables).sort()).toEqual(
      [ENV.logLevel, ENV.preTrafficTargets, ENV.apiKeysTable, ENV.deploymentTrafficFunction].sort(),
    );
    expect(variables[ENV.logLevel]).toBe(config.logLevel);
    expect(variables[ENV.apiKeysTable]).toEqual({ Ref: id(stage.stack.apiKeysTable.table) });
    expect(variables[ENV.deploymentTrafficFunction]).toEqual({ Ref: id(stage.stack.deploymentTraffic.function) });
    // The JSON CloudFormation will write, each function's name standing as the reference to it.
    const [separator, parts] = variables[ENV.preTrafficTargets]['Fn::Join'] as [string, unknown[]];
    const json = parts.map((part) => (typeof part === 'string' ? part : `<${(part as { Ref: string }).Ref}>`)).join(separator);
    const byName = Object.fromEntries([...stage.stack.functions.byName].map(([name, fn]) => [name, `<${id(fn.function)}>`]));
    expect(JSON.parse(json)).toEqual(byName);
    expect(Object.keys(byName).sort()).toEqual([...API_FUNCTIONS].sort());
  });

  it('may write its own log, invoke only the published versions of the stage’s functions and start the deployment traffic, put and revoke a key in the keys table, and read and report on deployments', () => {
    const groups = [...stage.stack.trafficShifting.deploymentGroups.values()];
    const groupArns = groups.map((group) => stage.stack.resolve(group.deploymentGroupArn));
    const expected = [
      ...['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
        Effect: 'Allow',
        Action: action,
        Resource: arn(hook().logGroup),
      })),
      ...stage.stack.functions.all.map((fn) => ({
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: { 'Fn::Join': ['', [arn(fn.function), ':*']] },
      })),
      { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: arn(stage.stack.deploymentTraffic.function) },
      // Issuing its check key and revoking it by its hash: it reads no key, nor anything of the pets table.
      ...['dynamodb:PutItem', 'dynamodb:UpdateItem'].map((action) => ({
        Effect: 'Allow',
        Action: action,
        Resource: arn(stage.stack.apiKeysTable.table),
      })),
      // On "*": the Service Authorization Reference gives these three no resource type, so nothing narrower grants them.
      ...['codedeploy:ListDeploymentTargets', 'codedeploy:GetDeploymentTarget', 'codedeploy:PutLifecycleEventHookExecutionStatus'].map(
        (action) => ({ Effect: 'Allow', Action: action, Resource: '*' }),
      ),
      // CDK's own grant of the report, by each deployment group's addPreHook: it matches nothing, and stays.
      ...groupArns.map((group) => ({ Effect: 'Allow', Action: 'codedeploy:PutLifecycleEventHookExecutionStatus', Resource: group })),
    ];
    expect(grantsOf(statementsOfRole(stage.json, id(hook().role)))).toEqual(grantsOf(expected));
    expect(groups).toHaveLength(stage.stack.functions.all.length);
  });

  it('acts as a Lambda function of its own: no managed policy, no inline policy, trusted by Lambda alone', () => {
    const role = stage.json.Resources[id(hook().role)]!.Properties!;
    expect(role.ManagedPolicyArns).toBeUndefined();
    expect(role.Policies).toBeUndefined();
    expect(role.AssumeRolePolicyDocument.Statement).toEqual([
      expect.objectContaining({ Action: 'sts:AssumeRole', Principal: { Service: 'lambda.amazonaws.com' } }),
    ]);
  });

  it('has the time to check and report within its timeout, and logs as JSON to a group kept as long as the stage’s others', () => {
    const properties = stage.json.Resources[id(hook().function)]!.Properties!;
    expect(properties.Timeout * 1000).toBeGreaterThanOrEqual(preTrafficHookTimeoutMs());
    // Lambda's longest timeout; CodeDeploy waits an hour for a report.
    expect(properties.Timeout).toBeLessThanOrEqual(15 * 60);
    expect(properties).toEqual(expect.objectContaining({ Runtime: 'nodejs24.x', Architectures: ['arm64'], MemorySize: 256 }));
    expect(properties.LoggingConfig).toEqual(
      expect.objectContaining({ LogFormat: 'JSON', ApplicationLogLevel: config.logLevel, LogGroup: { Ref: id(hook().logGroup) } }),
    );
    expect(stage.json.Resources[id(hook().logGroup)]!.Properties!.RetentionInDays).toBe(config.logRetention);
  });
});

describe.each(stages)('the rollback of the $name stage on 401s', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesizedStage(config.name);
  });

  const id = (construct: IConstruct) => stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);

  it('counts the 401s its access log shows for requests that carried a key, leaving out those without one', () => {
    const filter = stage.json.Resources[id(stage.stack.monitoring.keyedRefusals)]!;
    expect(filter.Type).toBe('AWS::Logs::MetricFilter');
    expect(filter.Properties).toEqual({
      LogGroupName: { Ref: id(stage.stack.api.accessLogs) },
      FilterPattern: '{ ($.status = "401") && ($.authorizerOutcome != "missing") }',
      MetricTransformations: [
        {
          MetricNamespace: `${config.stackName}/AccessLog`,
          MetricName: 'KeyedRefusals',
          MetricValue: '1',
          DefaultValue: 0,
          Unit: 'Count',
        },
      ],
    });
  });

  it('alarms when 5 % of a busy period’s requests carried a key and got 401, and that alarm rolls nothing back: anyone can send a refused key', () => {
    const alarm = stage.stack.monitoring.node.findChild('ApiKeyedRefusalRate') as IConstruct;
    const properties = stage.json.Resources[id(alarm)]!.Properties!;
    expect(properties).toEqual(
      expect.objectContaining({ Threshold: 5, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' }),
    );
    const metrics = properties.Metrics as Array<{ Id: string; Expression?: string; MetricStat?: any }>;
    expect(metrics.find((metric) => metric.Expression)?.Expression).toBe(
      `IF(requests >= ${config.alarms.minimumRequests}, 100 * FILL(refused, 0) / requests, 0)`,
    );
    expect(metrics.find((metric) => metric.Id === 'refused')?.MetricStat).toEqual(
      expect.objectContaining({ Metric: { Namespace: `${config.stackName}/AccessLog`, MetricName: 'KeyedRefusals' }, Stat: 'Sum' }),
    );
    expect(metrics.find((metric) => metric.Id === 'requests')?.MetricStat.Metric.MetricName).toBe('Count');
    expect(properties.AlarmActions).toEqual(expect.arrayContaining([{ Ref: id(stage.stack.monitoring.topic) }]));

    for (const [name, group] of stage.stack.trafficShifting.deploymentGroups) {
      const alarms = stage.json.Resources[id(group)]!.Properties!.AlarmConfiguration.Alarms as Array<{ Name: unknown }>;
      expect(alarms, name).not.toContainEqual({ Name: { Ref: id(alarm) } });
    }
  });

  it('counts the 401s its access log shows for requests whose key the authorizer accepted, and nothing else', () => {
    const filter = stage.json.Resources[id(stage.stack.monitoring.acceptedKeyRefusals)]!;
    expect(filter.Properties).toEqual({
      LogGroupName: { Ref: id(stage.stack.api.accessLogs) },
      FilterPattern: '{ ($.status = "401") && ($.authorizerOutcome = "allowed") }',
      MetricTransformations: [
        { MetricNamespace: `${config.stackName}/AccessLog`, MetricName: 'AcceptedKeyRefusals', MetricValue: '1', Unit: 'Count' },
      ],
    });
  });

  it('alarms on any 401 to an accepted key in two of three periods, and leaves rolling back to each function’s own 401 alarm', () => {
    const alarm = stage.stack.monitoring.node.findChild('ApiAcceptedKeyRefusals') as IConstruct;
    const properties = stage.json.Resources[id(alarm)]!.Properties!;
    expect(properties).toEqual(
      expect.objectContaining({
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        MetricName: 'AcceptedKeyRefusals',
        Namespace: `${config.stackName}/AccessLog`,
        Statistic: 'Sum',
        DatapointsToAlarm: config.alarms.datapointsToAlarm,
        EvaluationPeriods: config.alarms.evaluationPeriods,
      }),
    );
    for (const [name, group] of stage.stack.trafficShifting.deploymentGroups) {
      const alarms = stage.json.Resources[id(group)]!.Properties!.AlarmConfiguration.Alarms as Array<{ Name: unknown }>;
      expect(alarms, name).not.toContainEqual({ Name: { Ref: id(alarm) } });
      const own = stage.stack.versionAlarms.node.findChild(`${name}NewVersion401`) as IConstruct;
      expect(alarms, name).toContainEqual({ Name: { Ref: id(own) } });
    }
    expect([...stage.stack.trafficShifting.deploymentGroups.keys()].sort()).toEqual([...API_FUNCTIONS].sort());
  });
});

/** A function that stands in for one of the stage's on a bare stack. */
function standIn(stack: Stack, id: string): LambdaFunction {
  return new LambdaFunction(stack, id, {
    runtime: Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: Code.fromInline('export const handler = () => {};'),
  });
}

describe('the PreTrafficChecks construct', () => {
  /** The construct on a bare stack, gating two deployment groups of stand-in functions. */
  function build() {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Bare');
    const apiKeysTable = new ApiKeysTable(stack, 'Keys', { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false });
    const functions = new Map(
      API_FUNCTIONS.map((name) => [
        name,
        new LambdaFunction(stack, name, {
          runtime: Runtime.NODEJS_24_X,
          handler: 'index.handler',
          code: Code.fromInline('export const handler = () => {};'),
        }),
      ]),
    );
    const checks = new PreTrafficChecks(stack, 'Checks', {
      functions,
      deploymentTraffic: standIn(stack, 'DeploymentTraffic'),
      apiKeysTable,
      memoryMiB: 256,
      logLevel: 'INFO',
      logRetention: RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const application = new LambdaApplication(stack, 'Application');
    // Two of them: it gates whichever groups it is given, and no other.
    const gated = API_FUNCTIONS.slice(0, 2).map((name) => {
      const alias = new Alias(stack, `${name}Live`, { aliasName: 'live', version: functions.get(name)!.currentVersion });
      return { alias, group: new LambdaDeploymentGroup(stack, `${name}Group`, { application, alias }) };
    });
    checks.gate(gated);
    const groups = gated.map(({ group }) => group);
    return { stack, checks, groups, apiKeysTable, template: Template.fromStack(stack) };
  }

  it('becomes the BeforeAllowTraffic hook of exactly the groups it gates', () => {
    const { stack, checks, template } = build();
    const hookRef = { Ref: stack.getLogicalId(checks.function.node.defaultChild as CfnElement) };
    const aliases = Object.values(template.findResources('AWS::Lambda::Alias'));
    expect(aliases.map((alias) => alias.UpdatePolicy.CodeDeployLambdaAliasUpdate.BeforeAllowTrafficHook)).toEqual([hookRef, hookRef]);
  });

  it('may list and get a deployment’s targets and report on it, on "*", the only resource the Service Authorization Reference gives those calls', () => {
    const { stack, checks, groups, template } = build();
    const roleId = stack.getLogicalId(checks.role.node.defaultChild as CfnElement);
    const codeDeploy = statementsOfRole(template.toJSON() as CfnTemplate, roleId).filter((statement) =>
      JSON.stringify(statement).includes('codedeploy:'),
    );
    const groupArns = groups.map((group) => stack.resolve(group.deploymentGroupArn));
    expect(grantsOf(codeDeploy)).toEqual(
      grantsOf([
        ...['codedeploy:ListDeploymentTargets', 'codedeploy:GetDeploymentTarget', 'codedeploy:PutLifecycleEventHookExecutionStatus'].map(
          (action) => ({ Effect: 'Allow', Action: action, Resource: '*' }),
        ),
        ...groupArns.map((group) => ({ Effect: 'Allow', Action: 'codedeploy:PutLifecycleEventHookExecutionStatus', Resource: group })),
      ]),
    );
  });

  it('issues its check key in the keys table it is given, and may do nothing else there', () => {
    const { stack, checks, apiKeysTable, template } = build();
    const json = template.toJSON() as CfnTemplate;
    const table = stack.getLogicalId(apiKeysTable.table.node.defaultChild as CfnElement);
    const hook = json.Resources[stack.getLogicalId(checks.function.node.defaultChild as CfnElement)]!;
    expect(hook.Properties!.Environment.Variables[ENV.apiKeysTable]).toEqual({ Ref: table });
    const roleId = stack.getLogicalId(checks.role.node.defaultChild as CfnElement);
    const dynamoDb = statementsOfRole(json, roleId).filter((statement) => JSON.stringify(statement).includes('dynamodb:'));
    expect(grantsOf(dynamoDb)).toEqual(
      grantsOf(
        ['dynamodb:PutItem', 'dynamodb:UpdateItem'].map((action) => ({
          Effect: 'Allow',
          Action: action,
          Resource: { 'Fn::GetAtt': [table, 'Arn'] },
        })),
      ),
    );
  });

  it('refuses to be built without a function for every check plan, naming each one missing', () => {
    const [given, ...missing] = API_FUNCTIONS;
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Incomplete');
    const only = new LambdaFunction(stack, 'Only', {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = () => {};'),
    });
    expect(
      () =>
        new PreTrafficChecks(stack, 'Checks', {
          functions: new Map([[given, only]]),
          deploymentTraffic: standIn(stack, 'DeploymentTraffic'),
          apiKeysTable: new ApiKeysTable(stack, 'Keys', { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false }),
          memoryMiB: 256,
          logLevel: 'INFO',
          logRetention: RetentionDays.ONE_WEEK,
          removalPolicy: RemovalPolicy.DESTROY,
        }),
    ).toThrow(`no function for ${missing.join(', ')}`);
  });
});
