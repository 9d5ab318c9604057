import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { production, staging, type StageConfig } from '../../infra/stages';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { ENV } from '../../shared/facts/environment';
import { routes, type OperationId } from '../../shared/facts/routes';
import { functionAssets } from '../../tools/lambda/function-assets';
import { resourcesOfType, synthesize, type CfnTemplate, type Synthesis, type SynthesizedStage } from '../../tools/lambda/synth';
import { synthesizedApp, type SharedSynthesis } from '../helpers/synthesized-app';

/** The steps of a restore (docs/operations.md, "Restoring the pets table"), each one deploy of the same stage. */
const RESTORED_NAME = 'AnimalStore-Staging-pets-2026-11-20';
const restoredTo = (config: StageConfig, detachStackTable = false): StageConfig => ({
  ...config,
  restoredPetsTable: { tableName: RESTORED_NAME, ...(detachStackTable ? { detachStackTable } : {}) },
});

/** The stack's pets table, under the logical id test/infra/operations.test.ts pins. */
const PETS_TABLE_ID = 'PetsTable42325518';
const restoredArn = (config: StageConfig) => `arn:aws:dynamodb:${config.region}:${config.account}:table/${RESTORED_NAME}`;

/** Today (the shared app), pointed at the restored table, then with the stack's own table detached: the stages keep their names. */
let today: SharedSynthesis;
let restored: Synthesis;
let detached: Synthesis;
beforeAll(() => {
  // Environment, IAM and outputs live in the templates only: bundles are irrelevant here.
  const context = { 'aws:cdk:bundling-stacks': [] };
  today = synthesizedApp();
  restored = synthesize({ stages: [restoredTo(staging), restoredTo(production)], context });
  detached = synthesize({ stages: [restoredTo(staging, true), restoredTo(production, true)], context });
});
afterAll(() => {
  for (const synthesis of [restored, detached]) synthesis?.dispose();
});

function logicalId(stage: SynthesizedStage, construct: { node: { defaultChild?: unknown } }): string {
  return stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

/** The policy document of a function's role. */
function policyOf(stage: SynthesizedStage, name: OperationId): unknown {
  const role = logicalId(stage, stage.stack.functions.of(name).role);
  const [policy] = Object.values(resourcesOfType(stage.json, 'AWS::IAM::Policy')).filter((p) =>
    JSON.stringify(p.Properties!.Roles).includes(role),
  );
  return policy!.Properties!.PolicyDocument;
}

/** A template value with the stack's pets table's ARN replaced by `arn`, and the joins it made resolved. */
function onTable(value: unknown, arn: string): unknown {
  if (Array.isArray(value)) return value.map((item) => onTable(item, arn));
  if (value === null || typeof value !== 'object') return value;
  const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (getAtt?.[0] === PETS_TABLE_ID && getAtt[1] === 'Arn') return arn;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) {
    const parts = onTable(join[1], arn) as unknown[];
    if (parts.every((part) => typeof part === 'string')) return parts.join(join[0]);
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, onTable(item, arn)]));
}

describe.each([staging, production])('the $name stage pointed at a restored pets table', (config) => {
  let stage: SynthesizedStage;
  let before: SynthesizedStage;
  beforeAll(() => {
    stage = restored.stage(config.name);
    before = today.stage(config.name);
  });

  it("sets every route function's pets table to the restored table's name, and no other function's", () => {
    for (const fn of stage.stack.functions.all) {
      const variables = stage.json.Resources[logicalId(stage, fn.function)]!.Properties!.Environment.Variables;
      const isRoute = routes.some((route) => stage.stack.functions.of(route.operationId) === fn);
      expect(variables[ENV.petsTable], fn.node.id).toBe(isRoute ? RESTORED_NAME : undefined);
    }
  });

  it("grants each route function today's statements exactly, on the restored table and its indexes instead of the stack's", () => {
    for (const route of routes) {
      expect(policyOf(stage, route.operationId), route.operationId).toEqual(
        onTable(policyOf(before, route.operationId), restoredArn(config)),
      );
    }
  });

  it("leaves the stack's own pets table out of every role, environment, alarm, graph and output: nothing uses it", () => {
    const uses = Object.entries(stage.json.Resources)
      .filter(([id]) => id !== PETS_TABLE_ID)
      .filter(([, resource]) => JSON.stringify(resource).includes(PETS_TABLE_ID))
      .map(([id]) => id);
    expect(uses).toEqual([]);
    expect(JSON.stringify(stage.json.Outputs)).not.toContain(PETS_TABLE_ID);
  });

  it("keeps the stack's own pets table, unchanged, under its pinned logical id: the restore deletes nothing", () => {
    const table = stage.json.Resources[PETS_TABLE_ID];
    expect(table).toEqual(before.json.Resources[PETS_TABLE_ID]);
    expect(table!.DeletionPolicy).toBe(config === production ? 'RetainExceptOnCreate' : 'Delete');
  });

  it('points the smoke-test policy, the PetsTableName output, the throttling alarm and the dashboard at the restored table', () => {
    const statements = (policy: { node: { defaultChild?: unknown } }) =>
      stage.json.Resources[logicalId(stage, policy)]!.Properties!.PolicyDocument.Statement;
    expect(statements(stage.stack.smokeTestPolicy)).toContainEqual({
      Effect: 'Allow',
      Action: 'dynamodb:DeleteItem',
      Resource: restoredArn(config),
    });
    expect(stage.json.Outputs!.PetsTableName!.Value).toBe(RESTORED_NAME);
    const alarms = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Alarm')).filter((alarm) =>
      JSON.stringify(alarm).includes(RESTORED_NAME),
    );
    expect(alarms.map((alarm) => JSON.stringify(alarm.Properties!.Metrics))).toEqual([expect.stringContaining('ThrottledRequests')]);
    const [dashboard] = Object.values(resourcesOfType(stage.json, 'AWS::CloudWatch::Dashboard'));
    const body = JSON.stringify(dashboard!.Properties!.DashboardBody);
    expect(body).toContain(`\\"ConsumedReadCapacityUnits\\",\\"TableName\\",\\"${RESTORED_NAME}\\"`);
    expect(body).toContain(`\\"GlobalSecondaryIndexName\\",\\"${PETS_TABLE.allPetsIndex.name}\\",\\"TableName\\",\\"${RESTORED_NAME}\\"`);
  });
});

describe.each([staging, production])(
  'the $name stage, restored, with its own pets table detached so cdk import can adopt the restored one',
  (config) => {
    let before: CfnTemplate;
    let after: CfnTemplate;
    beforeAll(() => {
      before = restored.stage(config.name).json;
      after = detached.stage(config.name).json;
    });

    it('has no pets table resource of its own, and keeps its other tables', () => {
      expect(after.Resources[PETS_TABLE_ID]).toBeUndefined();
      expect(Object.keys(resourcesOfType(after, 'AWS::DynamoDB::GlobalTable'))).toHaveLength(
        Object.keys(resourcesOfType(before, 'AWS::DynamoDB::GlobalTable')).length - 1,
      );
    });

    it('differs from the restored stage by the pets table alone: the functions keep the named table, and adopting it is an import and nothing else', () => {
      const { [PETS_TABLE_ID]: _table, ...others } = before.Resources;
      expect(after.Resources).toEqual(others);
      expect(after.Outputs).toEqual(before.Outputs);
    });
  },
);

describe.each([false, true])('the local Lambda runner of a restored stage (detached: %s)', (detach) => {
  it('runs the functions against the local pets table, whatever name the restored one has', () => {
    const synthesis = detach ? detached : restored;
    const local = {
      tables: { pets: 'local-pets', apiKeys: 'local-keys', idempotency: 'local-idempotency' },
      dynamoDbEndpoint: 'http://127.0.0.1:1',
      cursorSecret: 'a-cursor-secret-of-at-least-32-characters',
    };
    const assets = functionAssets(synthesis, synthesis.stage(staging.name));
    for (const route of routes)
      expect(assets.get(route.operationId)!.environment(local)[ENV.petsTable], route.operationId).toBe('local-pets');
  });
});

describe('the restored pets table option, checked at synthesis', () => {
  const context = { 'aws:cdk:bundling-stacks': [] };
  const withName = (tableName: string): StageConfig => ({ ...staging, restoredPetsTable: { tableName } });

  it.each([
    ['a name with a space', 'pets restored', /"pets restored" of AnimalStore-Staging\/Pets is not a DynamoDB table name/],
    ['a name too short', 'pt', /is not a DynamoDB table name: 3 to 255/],
    ['an ARN', restoredArn(staging), /is an ARN: give the table name alone/],
    ['the name CloudFormation gave the stack’s own table', `${staging.stackName}-${PETS_TABLE_ID}-1A2B3C4D5E6F`, /stack's own pets table/],
  ])('refuses %s, saying what to give instead', (_, tableName, message) => {
    expect(() => synthesize({ stages: [withName(tableName)], context }).dispose()).toThrow(message);
  });
});
