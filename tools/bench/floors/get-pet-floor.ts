import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createDocumentClient } from '../../../shared/dynamodb/dynamodb-client';
import { PETS_TABLE } from '../../../shared/dynamodb/pets-table';
import { ENV } from '../../../shared/facts/environment';
import { answer, required } from './floor';

const client = createDocumentClient();
const tableName = required(ENV.petsTable);

/** getPet's floor: one GetItem by id. */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const { Item } = await client.send(
    new GetCommand({ TableName: tableName, Key: { [PETS_TABLE.partitionKey]: Number(event.pathParameters?.petId) } }),
  );
  return Item === undefined ? answer(404, {}) : answer(200, Item);
};
