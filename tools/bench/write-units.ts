import type { AttributeValue, TableDescription } from '@aws-sdk/client-dynamodb';
import { itemSize } from 'dynalite/db/index.js';

/** The key attributes of each of a table's global secondary indexes, as DescribeTable reports them. */
export function indexKeysOf(table: TableDescription | undefined): string[][] {
  return (table?.GlobalSecondaryIndexes ?? []).map((index) => (index.KeySchema ?? []).map((key) => key.AttributeName!));
}

/** Write units of one write of `item` (DynamoDB JSON), to the table or to one index: its size rounded up to 1 KB. */
export function entryWriteUnits(item: Record<string, AttributeValue>): number {
  return Math.max(1, Math.ceil(itemSize(item) / 1024));
}

/**
 * Write units DynamoDB charges a put of `item` for its index entries, which dynalite does not charge:
 * one entry per index whose key attributes it has, as large as the item (the store's indexes project
 * every attribute).
 */
export function indexWriteUnits(item: Record<string, AttributeValue>, indexKeys: readonly (readonly string[])[]): number {
  return entryWriteUnits(item) * indexKeys.filter((keys) => keys.every((key) => item[key] !== undefined)).length;
}
