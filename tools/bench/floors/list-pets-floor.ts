import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createDocumentClient } from '../../../shared/dynamodb/dynamodb-client';
import { firstQueryLimit } from '../../../shared/dynamodb/newest-first';
import { listingShardKey, PETS_TABLE } from '../../../shared/dynamodb/pets-table';
import { ENV } from '../../../shared/facts/environment';
import { answer, required } from './floor';

const client = createDocumentClient();
const tableName = required(ENV.petsTable);
const shards = Number(required(ENV.listingShards));

/**
 * listPets' floor: the Queries of one page (and one item more), newest first: one per listing shard,
 * each for its likely share, as the store's first round asks, and the answers sorted together.
 */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const status = event.queryStringParameters?.status;
  const index = status === undefined ? PETS_TABLE.allPetsIndex : PETS_TABLE.byStatusIndex;
  const answers = await Promise.all(
    Array.from({ length: shards }, (_, shard) =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: index.name,
          KeyConditionExpression: '#partition = :partition',
          ExpressionAttributeNames: { '#partition': index.partitionKey },
          ExpressionAttributeValues: { ':partition': listingShardKey(status ?? PETS_TABLE.collection, shard) },
          ScanIndexForward: false,
          Limit: firstQueryLimit(21, shards),
        }),
      ),
    ),
  );
  const items = answers.flatMap(({ Items = [] }) => Items).sort((a, b) => (a[index.sortKey] < b[index.sortKey] ? 1 : -1));
  return answer(200, items.slice(0, 20));
};
