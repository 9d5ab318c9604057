import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { documentClient, required } from './floor';

const client = documentClient();
const tableName = required('API_KEYS_TABLE_NAME');

/**
 * The authorizer's floor: the key's hash looked up with one strongly consistent GetItem, no cache; the key's id
 * passed on, and the version that answered, which a deployment judges each version's refusals by.
 */
export const handler = async (event: APIGatewayRequestAuthorizerEventV2, context: { functionVersion: string }) => {
  const token = (event.headers?.authorization ?? '').replace(/^Bearer /, '');
  const keyHash = createHash('sha256').update(token, 'utf8').digest('hex');
  const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { keyHash }, ConsistentRead: true }));
  const verdict = Item === undefined ? { outcome: 'invalid' } : { outcome: 'allowed', keyId: Item.keyId };
  return { isAuthorized: true, context: { ...verdict, version: context.functionVersion } };
};
