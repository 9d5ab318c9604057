import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import { documentClient } from './floor-client';
import { required } from './floor';

const client = documentClient();
const tableName = required('API_KEYS_TABLE_NAME');

/**
 * The authorizer's floor: no bearer key is `missing` without a lookup; a key's hash is looked up with one strongly
 * consistent GetItem, no cache; the key's id passed on, and the version that answered, which a deployment judges
 * each version's refusals by.
 */
export const handler = async (event: APIGatewayRequestAuthorizerEventV2, context: { functionVersion: string }) => {
  const authorization = event.headers?.authorization;
  if (!authorization?.startsWith('Bearer '))
    return { isAuthorized: true, context: { outcome: 'missing', version: context.functionVersion } };
  const token = authorization.slice('Bearer '.length);
  const keyHash = createHash('sha256').update(token, 'utf8').digest('hex');
  const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { keyHash }, ConsistentRead: true }));
  const verdict = Item === undefined ? { outcome: 'invalid' } : { outcome: 'allowed', keyId: Item.keyId };
  return { isAuthorized: true, context: { ...verdict, version: context.functionVersion } };
};
