import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { hashApiKey } from '../../../shared/domain/auth/api-keys';
import { API_KEYS_TABLE } from '../../../shared/dynamodb/api-keys-table';
import { createDocumentClient } from '../../../shared/dynamodb/dynamodb-client';
import { ENV } from '../../../shared/facts/environment';
import { required } from './floor';

const client = createDocumentClient();
const tableName = required(ENV.apiKeysTable);

/** The authorizer's floor: the key's hash looked up with one strongly consistent GetItem, no cache. */
export const handler = async (event: APIGatewayRequestAuthorizerEventV2) => {
  const token = (event.headers?.authorization ?? '').replace(/^Bearer /, '');
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: { [API_KEYS_TABLE.partitionKey]: hashApiKey(token) }, ConsistentRead: true }),
  );
  return { isAuthorized: true, context: { outcome: Item === undefined ? 'invalid' : 'allowed' } };
};
