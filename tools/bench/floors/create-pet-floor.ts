import { randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { documentClient } from './floor-client';
import { answer, answerError, refusal, required } from './floor';

const client = documentClient();
const tableName = required('PETS_TABLE_NAME');
const shards = Number(required('PETS_WRITE_SHARDS'));

/**
 * createPet's floor: the body parsed as it comes, its name checked, one conditional PutItem of the item the function writes
 * (the pet, its listing shard's index keys, a 128-bit creation token) under a random id, the pet answered.
 */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const refused = refusal(event);
  if (refused) return refused;
  const body = JSON.parse(event.body ?? '{}');
  if (typeof body.name !== 'string') return answerError(400, 'invalid_parameter', 'name is required.');
  const pet = { ...body, id: Number(randomBytes(8).readBigUInt64BE() % BigInt(Number.MAX_SAFE_INTEGER)) + 1 };
  const createdAt = new Date().toISOString();
  const shard = pet.id % shards;
  const suffix = shard === 0 ? '' : `#${shard}`;
  await client
    .send(
      new PutCommand({
        TableName: tableName,
        Item: {
          ...pet,
          createdAt,
          collection: `pets${suffix}`,
          createdKey: `${createdAt}#${String(pet.id).padStart(16, '0')}`,
          ...(pet.status === undefined ? {} : { statusShard: `${pet.status}${suffix}` }),
          creationToken: randomBytes(16).toString('base64url'),
        },
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': 'id' },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    )
    // A retry met its own timed-out attempt's write (random ids do not collide), as the function's would.
    .catch((error: Error) => {
      if (error.name !== 'ConditionalCheckFailedException') throw error;
    });
  return answer(201, pet);
};
