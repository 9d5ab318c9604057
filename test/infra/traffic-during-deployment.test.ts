import { App, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LambdaApplication, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Alias, Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { RemovalPolicy } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import { stages, type StageConfig } from '../../infra/stages';
import { DeploymentTraffic } from '../../infra/traffic-during-deployment';
import { LAMBDA_MAX_TIMEOUT_MS } from '../../shared/facts/deployment';
import { ENV } from '../../shared/facts/environment';
import { API_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';
import type { SynthesizedStage } from '../../tools/lambda/synth';
import { grantsOf, statementsOfRole } from '../helpers/iam-statements';
import { synthesizedStage } from '../helpers/synthesized-app';

const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

describe.each(stages)('the deployment traffic of the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesizedStage(config.name);
  });
  const id = (construct: IConstruct) => stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);
  const arn = (construct: IConstruct) => ({ 'Fn::GetAtt': [id(construct), 'Arn'] });
  const traffic = () => stage.stack.deploymentTraffic;

  it("may write its own log, invoke only each function's live alias, and read and report on its stage's deployments", () => {
    const groups = [...stage.stack.trafficShifting.deploymentGroups.values()].map((group) => stage.stack.resolve(group.deploymentGroupArn));
    const expected = [
      ...['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
        Effect: 'Allow',
        Action: action,
        Resource: arn(traffic().logGroup),
      })),
      ...stage.stack.functions.all.map((fn) => ({
        Effect: 'Allow',
        Action: 'lambda:InvokeFunction',
        Resource: { 'Fn::Join': ['', [arn(fn.function), ':live']] },
      })),
      ...groups.map((group) => ({ Effect: 'Allow', Action: 'codedeploy:GetDeployment', Resource: group })),
      // On "*": the Service Authorization Reference gives the report no resource type, so nothing narrower grants it.
      { Effect: 'Allow', Action: 'codedeploy:PutLifecycleEventHookExecutionStatus', Resource: '*' },
      // CDK's own grant of the report, by each deployment group's addPostHook: it matches nothing, and stays.
      ...groups.map((group) => ({ Effect: 'Allow', Action: 'codedeploy:PutLifecycleEventHookExecutionStatus', Resource: group })),
    ];
    expect(grantsOf(statementsOfRole(stage.json, id(traffic().role)))).toEqual(grantsOf(expected));
  });

  it('knows each function by its deployed name and the namespace it counts in, and is told nothing else', () => {
    const variables = stage.json.Resources[id(traffic().function)]!.Properties!.Environment.Variables;
    expect(Object.keys(variables).sort()).toEqual([ENV.logLevel, ENV.metricsNamespace, ENV.preTrafficTargets].sort());
    const [separator, parts] = variables[ENV.preTrafficTargets]['Fn::Join'] as [string, unknown[]];
    const json = parts.map((part) => (typeof part === 'string' ? part : `<${(part as { Ref: string }).Ref}>`)).join(separator);
    expect(JSON.parse(json)).toEqual(
      Object.fromEntries([...stage.stack.functions.byName].map(([name, fn]) => [name, `<${id(fn.function)}>`])),
    );
  });

  it('lasts through a whole deployment: its timeout is Lambda’s longest', () => {
    expect(stage.json.Resources[id(traffic().function)]!.Properties!.Timeout * 1000).toBe(LAMBDA_MAX_TIMEOUT_MS);
  });
});

describe('the DeploymentTraffic construct', () => {
  /** The construct on a bare stack, baking two deployment groups of stand-in functions. */
  function build(names: readonly ApiFunctionName[] = API_FUNCTIONS) {
    const stack = new Stack(new App({ context: NO_BUNDLING }), 'Bare');
    const application = new LambdaApplication(stack, 'Application');
    const aliases = new Map(
      names.map((name) => {
        const fn = new LambdaFunction(stack, name, {
          runtime: Runtime.NODEJS_24_X,
          handler: 'index.handler',
          code: Code.fromInline('exports.handler=()=>{}'),
        });
        return [name, new Alias(stack, `${name}Live`, { aliasName: 'live', version: fn.currentVersion })] as const;
      }),
    );
    const traffic = new DeploymentTraffic(stack, 'Traffic', {
      aliases,
      memoryMiB: 128,
      logLevel: 'INFO',
      metricsNamespace: 'AnimalStore/test',
      logRetention: RetentionDays.ONE_WEEK,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const groups = (['listPets', 'getPet'] as const).map(
      (name) => new LambdaDeploymentGroup(stack, `${name}Group`, { application, alias: aliases.get(name)! }),
    );
    traffic.bake(groups);
    return { stack, traffic, template: Template.fromStack(stack) };
  }

  it('becomes the AfterAllowTraffic hook of exactly the groups it bakes', () => {
    const { stack, traffic, template } = build();
    const hookRef = { Ref: stack.getLogicalId(traffic.function.node.defaultChild as CfnElement) };
    const updates = Object.values(template.findResources('AWS::Lambda::Alias')).map(
      (alias) => alias.UpdatePolicy?.CodeDeployLambdaAliasUpdate?.AfterAllowTrafficHook,
    );
    expect(updates.filter(Boolean)).toEqual([hookRef, hookRef]);
  });

  it('refuses to be built without the alias of every function behind the API', () => {
    const [first, ...rest] = API_FUNCTIONS;
    expect(() => build([first])).toThrow(`no alias for ${rest.join(', ')}`);
  });
});
