import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { IdempotencyTable } from '../../infra/tables';
import { IDEMPOTENCY_TABLE } from '../../shared/dynamodb/idempotency-table';

/** The IdempotencyTable construct on its own, on a bare stack. */
function build() {
  const stack = new Stack(new App(), 'Bare');
  const table = new IdempotencyTable(stack, 'Idempotency');
  const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
  table.grant(role, ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem']);
  return { stack, table, role, template: Template.fromStack(stack) };
}

describe('the idempotency table construct', () => {
  it('keys records by the string id the store writes and expires them by TTL on their expiration attribute', () => {
    const { template } = build();
    template.hasResourceProperties('AWS::DynamoDB::GlobalTable', {
      KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: IDEMPOTENCY_TABLE.expiryAttribute, Enabled: true },
      BillingMode: 'PAY_PER_REQUEST',
    });
  });

  it('goes with the stack: its records live a day and need no restore', () => {
    const resources = Object.values(build().template.findResources('AWS::DynamoDB::GlobalTable'));
    expect(resources).toHaveLength(1);
    expect(resources[0]!.DeletionPolicy).toBe('Delete');
  });

  it('grants exactly the four item operations of the persistence layer, on this table only', () => {
    const { stack, table, template } = build();
    const [policy] = Object.values(template.findResources('AWS::IAM::Policy'));
    expect(policy!.Properties.PolicyDocument.Statement).toEqual([
      {
        Effect: 'Allow',
        Action: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
        Resource: stack.resolve(table.table.tableArn),
      },
    ]);
  });
});
