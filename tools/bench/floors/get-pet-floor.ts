import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { documentClient } from './floor-client';
import { answer, answerError, petOf, refusal, required, unavailable } from './floor';

const client = documentClient();
const tableName = required('PETS_TABLE_NAME');

/** getPet's floor: one GetItem by id, the pet answered; none found, the 404; the store failing, the 503. */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const refused = refusal(event);
  if (refused) return refused;
  const petId = Number(event.pathParameters?.petId);
  try {
    const { Item } = await client.send(new GetCommand({ TableName: tableName, Key: { id: petId } }));
    return Item === undefined ? answerError(404, 'not_found', `No pet has id ${petId}.`) : answer(200, petOf(Item));
  } catch {
    return unavailable();
  }
};
