import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand, type DynamoDBDocumentClient, type PutCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { callStore } from './dynamodb-client';

/** What a conditional put did. */
export type ConditionalPutResult =
  | { readonly written: true }
  /** The condition failed on `current`: the item under the key, absent if it was gone by the time it was read. */
  | { readonly written: false; readonly current: Record<string, unknown> | undefined };

/**
 * Puts an item if its condition holds, else returns the item the condition failed on: a retried put fails
 * on its own first attempt's item, which only that item can tell. dynalite does not return it, so then it
 * is read, strongly consistent since the write may have only just landed.
 */
export async function putConditionally(
  client: DynamoDBDocumentClient,
  key: Record<string, unknown>,
  input: PutCommandInput & { readonly ConditionExpression: string },
): Promise<ConditionalPutResult> {
  try {
    await callStore(() => client.send(new PutCommand({ ...input, ReturnValuesOnConditionCheckFailure: 'ALL_OLD' })));
    return { written: true };
  } catch (error) {
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
    if (error.Item !== undefined) return { written: false, current: unmarshall(error.Item) };
  }
  const { Item } = await callStore(() => client.send(new GetCommand({ TableName: input.TableName, Key: key, ConsistentRead: true })));
  return { written: false, current: Item };
}
