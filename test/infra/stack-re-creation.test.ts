import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { accessLogGroupPrefix } from '../../infra/animal-store-http-api';
import { stages, type StageConfig } from '../../infra/stages';
import type { CfnTemplate } from '../../tools/lambda/synth';
import { evaluateIntrinsics } from '../helpers/cfn-intrinsics';
import { synthesizedApp, synthesizedStage } from '../helpers/synthesized-app';

/** What CloudFormation leaves behind when the resource leaves the stack, or when the stack is deleted. */
const KEPT = new Set(['Retain', 'RetainExceptOnCreate', 'Snapshot']);

/** Two creations of one stack: the same name, region and account, another stack id. */
function creation(stackName: string, uuid: string): Record<string, string> {
  return {
    'AWS::StackName': stackName,
    'AWS::StackId': `arn:aws:cloudformation:eu-west-1:123456789012:stack/${stackName}/${uuid}`,
    'AWS::Region': 'eu-west-1',
    'AWS::AccountId': '123456789012',
    'AWS::Partition': 'aws',
    'AWS::URLSuffix': 'amazonaws.com',
  };
}
const FIRST = '8c1e8a50-3b1a-11f0-9f2e-0a1b2c3d4e5f';
const SECOND = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';

/**
 * Every retained resource's top-level name property (LogGroupName, TableName, a secret's Name, ...)
 * that a second creation of the stack would repeat: a literal, or built from what stays the same.
 * A name that cannot be evaluated without the deployed stack counts too: nothing shows it differs.
 */
function namesRepeatedOnReCreation(json: CfnTemplate, stackName: string): string[] {
  return Object.entries(json.Resources).flatMap(([id, resource]) => {
    if (!KEPT.has(resource.DeletionPolicy ?? '') && !KEPT.has(resource.UpdateReplacePolicy ?? '')) return [];
    return Object.entries(resource.Properties ?? {})
      .filter(([property]) => property.endsWith('Name'))
      .filter(([, value]) => {
        try {
          return evaluateIntrinsics(value, creation(stackName, FIRST)) === evaluateIntrinsics(value, creation(stackName, SECOND));
        } catch {
          return true;
        }
      })
      .map(([property, value]) => `${id} (${resource.Type}) ${property}: ${JSON.stringify(value)}`);
  });
}

function retainedTypes(json: CfnTemplate): string[] {
  const types = Object.values(json.Resources)
    .filter((resource) => KEPT.has(resource.DeletionPolicy ?? '') || KEPT.has(resource.UpdateReplacePolicy ?? ''))
    .map((resource) => resource.Type);
  return [...new Set(types)].sort();
}

describe('the check for names a re-created stack would repeat', () => {
  const stackName = 'Made-Up';
  const madeUp: CfnTemplate = {
    Resources: {
      LiteralName: {
        Type: 'AWS::Logs::LogGroup',
        DeletionPolicy: 'Retain',
        Properties: { LogGroupName: '/aws/vendedlogs/made-up/access' },
      },
      FromStackName: {
        Type: 'AWS::DynamoDB::Table',
        UpdateReplacePolicy: 'Snapshot',
        Properties: { TableName: { 'Fn::Join': ['-', [{ Ref: 'AWS::StackName' }, 'pets']] } },
      },
      FromAnotherResource: { Type: 'AWS::SecretsManager::Secret', DeletionPolicy: 'Retain', Properties: { Name: { Ref: 'Other' } } },
      FromStackId: {
        Type: 'AWS::SecretsManager::Secret',
        DeletionPolicy: 'Retain',
        Properties: { Name: { 'Fn::Join': ['-', ['cursor', { 'Fn::Select': [2, { 'Fn::Split': ['/', { Ref: 'AWS::StackId' }] }] }]] } },
      },
      Unnamed: { Type: 'AWS::Logs::LogGroup', DeletionPolicy: 'Retain', Properties: { RetentionInDays: 90 } },
      DeletedWithTheStack: { Type: 'AWS::Logs::LogGroup', DeletionPolicy: 'Delete', Properties: { LogGroupName: 'fixed' } },
    },
  };

  it('names retained resources with a literal name, a name built from the stack name, or one it cannot evaluate', () => {
    expect(namesRepeatedOnReCreation(madeUp, stackName).map((finding) => finding.split(' ')[0])).toEqual([
      'LiteralName',
      'FromStackName',
      'FromAnotherResource',
    ]);
  });
});

// The shared synthesis bundles every function: in a hook, whose time limit allows for that, not in the first test.
beforeAll(() => {
  synthesizedApp();
});

describe.each(stages)('re-creating the $name stack', (config: StageConfig) => {
  it('finds no retained resource left by a deleted stack under a name the new stack would take', () => {
    const { json } = synthesizedStage(config.name);
    expect(namesRepeatedOnReCreation(json, config.stackName)).toEqual([]);
  });

  it('writes the access log to a new group under /aws/vendedlogs/apigateway/<stack>/ for each creation of the stack', () => {
    const stage = synthesizedStage(config.name);
    const id = stage.stack.getLogicalId(stage.stack.api.accessLogs.node.defaultChild as CfnElement);
    const name = stage.json.Resources[id]!.Properties!.LogGroupName;
    const first = evaluateIntrinsics(name, creation(config.stackName, FIRST)) as string;
    const second = evaluateIntrinsics(name, creation(config.stackName, SECOND)) as string;
    // Vended logs need no entry in the account's CloudWatch Logs resource policy (infra/animal-store-http-api.ts).
    expect(first).toBe(`/aws/vendedlogs/apigateway/${config.stackName}/access-8c1e8a50`);
    expect(second).toBe(`/aws/vendedlogs/apigateway/${config.stackName}/access-f47ac10b`);
    // The prefix the runbook's describe-log-groups uses finds both.
    for (const group of [first, second]) expect(group.startsWith(accessLogGroupPrefix(config.stackName))).toBe(true);
  });
});

describe('deleting the production stack', () => {
  it('leaves its tables, secrets and log groups behind, as the runbook lists them', () => {
    const production = stages.find((stage) => stage.name === 'production')!;
    expect(retainedTypes(synthesizedStage(production.name).json)).toEqual([
      'AWS::DynamoDB::GlobalTable',
      'AWS::Logs::LogGroup',
      'AWS::SecretsManager::Secret',
    ]);
  });
});
