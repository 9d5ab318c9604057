import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';

// What every floor shares, and only npm packages besides: a floor is the design's calls through the stock SDK
// client, so nothing of the project's code may reach it (test/tools/bench/floors.test.ts). What a floor is:
// docs/performance.md, "What it measures".

/** The stock document client, marshalling as the functions' does (undefined attributes dropped). */
export function documentClient(): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
}

/** What every floor answers with: a status and a JSON body, the least any API function must do with its command's result. */
export function answer(statusCode: number, body: unknown): APIGatewayProxyResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A variable the function's template sets; a floor run without it is a bench bug. */
export function required(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

/** A stored pet as the API answers it: without what the table keeps beside it (index keys, creation time, the create's token). */
export function petOf(item: Record<string, unknown>): Record<string, unknown> {
  const {
    collection: _collection,
    createdKey: _createdKey,
    statusShard: _statusShard,
    createdAt: _createdAt,
    creationToken: _token,
    ...pet
  } = item;
  return pet;
}
