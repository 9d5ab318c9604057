import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { ConfiguredRetryStrategy } from '@smithy/util-retry';

/**
 * The stock document client, marshalling as the functions' does (undefined attributes dropped), with the design's
 * attempts, their timeouts and their backoff (shared/dynamodb/dynamodb-client.ts), written again as a floor imports no
 * project code. A failing store costs what its retries cost, so a floor retrying otherwise would measure another policy.
 */
export function documentClient(): DynamoDBDocumentClient {
  const client = new DynamoDBClient({
    retryStrategy: new ConfiguredRetryStrategy(3, (retry) => 100 * 2 ** (retry - 1)),
    requestHandler: new NodeHttpHandler({ connectionTimeout: 1_000, requestTimeout: 1_000, throwOnRequestTimeout: true }),
  });
  return DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
}
