import { randomInt, randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createDocumentClient } from '../../../shared/dynamodb/dynamodb-client';
import { toItem } from '../../../shared/dynamodb/dynamo-pet-store';
import { PETS_TABLE } from '../../../shared/dynamodb/pets-table';
import { ENV } from '../../../shared/facts/environment';
import { answer, required } from './floor';

const client = createDocumentClient();
const tableName = required(ENV.petsTable);
const shards = Number(required(ENV.writeShards));

/** createPet's floor: the body parsed as it comes, one conditional PutItem of the same item. */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const pet = { ...JSON.parse(event.body ?? '{}'), id: randomInt(1, 2 ** 48), createdAt: new Date().toISOString() };
  await client
    .send(
      new PutCommand({
        TableName: tableName,
        Item: toItem(pet, randomUUID(), shards),
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': PETS_TABLE.partitionKey },
      }),
    )
    // A retry met its own timed-out attempt's write (random 48-bit ids do not collide), as the function's would.
    .catch((error: Error) => {
      if (error.name !== 'ConditionalCheckFailedException') throw error;
    });
  return answer(201, pet);
};
