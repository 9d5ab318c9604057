import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createDocumentClient } from '../../../src/dynamodb/dynamodb-client';
import { PETS_TABLE } from '../../../src/dynamodb/pets-table';
import { ENV } from '../../../src/facts/environment';
import { answer, required } from './floor';

const client = createDocumentClient();
const tableName = required(ENV.petsTable);

/** listPets' floor: the Query of one page (and one item more), newest first. */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const status = event.queryStringParameters?.status;
  const index = status === undefined ? PETS_TABLE.allPetsIndex : PETS_TABLE.byStatusIndex;
  const { Items = [] } = await client.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: index.name,
      KeyConditionExpression: '#partition = :partition',
      ExpressionAttributeNames: { '#partition': index.partitionKey },
      ExpressionAttributeValues: { ':partition': status ?? PETS_TABLE.collection },
      ScanIndexForward: false,
      Limit: 21,
    }),
  );
  return answer(200, Items.slice(0, 20));
};
