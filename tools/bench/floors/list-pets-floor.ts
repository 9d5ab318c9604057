import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { documentClient } from './floor-client';
import { answer, answerError, petOf, refusal, required } from './floor';

const client = documentClient();
const tableName = required('PETS_TABLE_NAME');
const shards = Number(required('PETS_LISTING_SHARDS'));
/** A default page and one pet more, which tells whether a next page exists. */
const WANTED = 21;
/** Each shard's likely share of them, as the store's first round asks (shared/dynamodb/newest-first.ts). */
const perShard = shards === 1 ? WANTED : Math.min(WANTED, Math.ceil(WANTED / shards + 2 * Math.sqrt(WANTED / shards) + 1));

/** listPets' floor: `limit` checked, then the Queries of one page, newest first, one per listing shard, the answers sorted together. */
export const handler = async (event: APIGatewayProxyEventV2) => {
  const refused = refusal(event);
  if (refused) return refused;
  const limit = event.queryStringParameters?.limit;
  if (limit !== undefined && !(/^[1-9]\d{0,2}$/.test(limit) && Number(limit) <= 100)) {
    return answerError(400, 'invalid_parameter', 'limit must be an integer from 1 to 100.');
  }
  const status = event.queryStringParameters?.status;
  const [partitionKey, indexName] = status === undefined ? ['collection', 'pets-by-creation'] : ['statusShard', 'pets-by-status-shard'];
  const answers = await Promise.all(
    Array.from({ length: shards }, (_, shard) =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: indexName,
          KeyConditionExpression: '#partition = :partition',
          ExpressionAttributeNames: { '#partition': partitionKey },
          ExpressionAttributeValues: { ':partition': shard === 0 ? (status ?? 'pets') : `${status ?? 'pets'}#${shard}` },
          ScanIndexForward: false,
          Limit: perShard,
        }),
      ),
    ),
  );
  const items = answers.flatMap(({ Items = [] }) => Items).sort((a, b) => (a.createdKey < b.createdKey ? 1 : -1));
  return answer(200, items.slice(0, WANTED - 1).map(petOf));
};
