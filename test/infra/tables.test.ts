import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { ApiKeysTable, PetsTable } from '../../infra/tables';
import { API_KEYS_TABLE } from '../../shared/dynamodb/api-keys-table';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import type { TableAction } from '../../shared/catalog/function-catalog';

/** The data tables' constructs on their own, on a bare stack: milliseconds each, no app to synthesize. */
function bare() {
  const stack = new Stack(new App(), 'Bare');
  const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  return { stack, role };
}

const kept = { removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, deletionProtection: true };
const disposable = { removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false };

/** The statements of the one policy a test's role was given. */
function statementsOf(template: Template): unknown[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy'));
  expect(policies).toHaveLength(1);
  return policies[0]!.Properties.PolicyDocument.Statement;
}

describe('the pets table construct', () => {
  it('keys pets by their numeric id and indexes them for listing all and listing by status', () => {
    const { stack } = bare();
    new PetsTable(stack, 'Pets', kept);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: PETS_TABLE.partitionKey, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      GlobalSecondaryIndexes: [PETS_TABLE.allPetsIndex, PETS_TABLE.byStatusIndex].map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
      Replicas: [{ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true }, DeletionProtectionEnabled: true }],
    });
  });

  it.each([
    ['kept, except after a failed create', kept, 'RetainExceptOnCreate', 'Retain'],
    ['disposable', disposable, 'Delete', 'Delete'],
  ])('follows the removal policy it is given (%s)', (_, props, deletion, replacement) => {
    const { stack } = bare();
    new PetsTable(stack, 'Pets', props);
    const [table] = Object.values(Template.fromStack(stack).findResources('AWS::DynamoDB::GlobalTable'));
    expect(table).toMatchObject({ DeletionPolicy: deletion, UpdateReplacePolicy: replacement });
  });

  it.each<[string, TableAction[], Array<string | string[]>]>([
    ['a listing: Query on the two indexes only', ['Query'], ['dynamodb:Query']],
    ['a read: GetItem on the table', ['GetItem'], ['dynamodb:GetItem']],
    [
      'a create: PutItem, and GetItem to read back its own earlier write',
      ['PutItem', 'GetItem'],
      [['dynamodb:PutItem', 'dynamodb:GetItem']],
    ],
  ])('grants %s, and nothing else', (_, access, actions) => {
    const { stack, role } = bare();
    new PetsTable(stack, 'Pets', kept).grant(role, access);
    const statements = statementsOf(Template.fromStack(stack)) as Array<{ Action: string | string[]; Resource: unknown }>;
    expect(statements.map((statement) => statement.Action)).toEqual(actions);
    if (access[0] === 'Query') expect(JSON.stringify(statements[0]!.Resource)).toContain(`/index/${PETS_TABLE.byStatusIndex.name}`);
  });
});

describe('the pets table construct during a restore', () => {
  const restored = { tableName: 'pets-restored' };
  /** An ARN of the stack's partition, as a bare stack writes it. */
  const restoredArn = (suffix = '') => ({
    'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:dynamodb:eu-west-1:123456789012:table/pets-restored${suffix}`]],
  });
  function placed() {
    const stack = new Stack(new App(), 'Bare', { env: { account: '123456789012', region: 'eu-west-1' } });
    const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    return { stack, role };
  }

  it("grants each access on the restored table, by name, in the stack's account and region, instead of its own", () => {
    const { stack, role } = placed();
    const pets = new PetsTable(stack, 'Pets', { ...kept, restored });
    pets.grant(role, ['Query', 'GetItem', 'PutItem']);
    const statements = statementsOf(Template.fromStack(stack));
    expect(statements).toEqual([
      { Effect: 'Allow', Action: ['dynamodb:GetItem', 'dynamodb:PutItem'], Resource: restoredArn() },
      { Effect: 'Allow', Action: 'dynamodb:Query', Resource: pets.indexNames.map((index) => restoredArn(`/index/${index}`)) },
    ]);
    expect(stack.resolve(pets.table.tableName)).toBe(restored.tableName);
  });

  it('keeps its own table, retained, unless told to detach it', () => {
    const retained = placed();
    new PetsTable(retained.stack, 'Pets', { ...kept, restored });
    const [table] = Object.values(Template.fromStack(retained.stack).findResources('AWS::DynamoDB::GlobalTable'));
    expect(table).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
    const detached = placed();
    new PetsTable(detached.stack, 'Pets', { ...kept, restored: { ...restored, detachStackTable: true } });
    expect(Template.fromStack(detached.stack).findResources('AWS::DynamoDB::GlobalTable')).toEqual({});
  });
});

describe('the API keys table construct', () => {
  it('keys records by the key hash and indexes their public ids, keys only', () => {
    const { stack } = bare();
    new ApiKeysTable(stack, 'Keys', kept);
    Template.fromStack(stack).hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: API_KEYS_TABLE.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: API_KEYS_TABLE.byKeyIdIndex.name,
          KeySchema: [{ AttributeName: API_KEYS_TABLE.byKeyIdIndex.partitionKey, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    });
  });

  it("grants looking one key up by its hash, the authorizer's access, and nothing else", () => {
    const { stack, role } = bare();
    new ApiKeysTable(stack, 'Keys', kept).grant(role, ['GetItem']);
    const statements = statementsOf(Template.fromStack(stack)) as Array<{ Action: string }>;
    expect(statements.map((statement) => statement.Action)).toEqual(['dynamodb:GetItem']);
  });

  it('lets key administration put, list, find by id and revoke, but never delete or read a key by its hash', () => {
    const { stack } = bare();
    const actions = new ApiKeysTable(stack, 'Keys', kept).keyAdministrationStatements().flatMap((statement) => statement.actions);
    expect(actions.sort()).toEqual(['dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:UpdateItem']);
  });
});
