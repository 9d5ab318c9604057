import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { answer, documentClient, petOf, required } from './floor';

const client = documentClient();
const tableName = required('PETS_TABLE_NAME');

/** getPet's floor: one GetItem by id, the pet answered. */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { id: Number(event.pathParameters?.petId) } }));
  return Item === undefined ? answer(404, {}) : answer(200, petOf(Item));
};
