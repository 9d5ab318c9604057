import { QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { callStore } from './dynamodb-client';

/** One partition of an index that a listing reads: one of its shards. */
export interface ListingPartition {
  readonly indexName: string;
  readonly partitionKey: string;
  readonly value: string;
}

type Item = Record<string, unknown>;

interface PartitionReader {
  readonly partition: ListingPartition;
  items: Item[];
  position: number;
  startKey: Item | undefined;
  exhausted: boolean;
}

/**
 * How many items the first query of each of `partitions` partitions asks for when `wanted` items are
 * merged from them: the expected share of an evenly spread partition, plus two standard deviations and
 * one, so a second round trip is rare without reading every partition `wanted` deep.
 */
export function firstQueryLimit(wanted: number, partitions: number): number {
  if (partitions === 1) return wanted;
  const share = wanted / partitions;
  return Math.min(wanted, Math.ceil(share + 2 * Math.sqrt(share) + 1));
}

/**
 * The `wanted` newest items of the given partitions of a table's indexes, all sorted by the same
 * `sortKey`, below `before` when given: a merge that queries each partition newest first for its likely
 * share, and again only a partition the merge has used up while it may hold more.
 */
export async function readNewestFirst(
  client: DynamoDBDocumentClient,
  tableName: string,
  query: { readonly partitions: readonly ListingPartition[]; readonly sortKey: string; readonly wanted: number; readonly before?: string },
): Promise<Item[]> {
  const { partitions, sortKey, wanted, before } = query;
  const readers: PartitionReader[] = partitions.map((partition) => ({
    partition,
    items: [],
    position: 0,
    startKey: undefined,
    exhausted: false,
  }));
  const fetch = async (reader: PartitionReader, limit: number) => {
    const { Items = [], LastEvaluatedKey } = await callStore(() =>
      client.send(
        new QueryCommand({
          TableName: tableName,
          IndexName: reader.partition.indexName,
          KeyConditionExpression: before === undefined ? '#partition = :partition' : '#partition = :partition AND #sort < :before',
          ExpressionAttributeNames: { '#partition': reader.partition.partitionKey, ...(before === undefined ? {} : { '#sort': sortKey }) },
          ExpressionAttributeValues: { ':partition': reader.partition.value, ...(before === undefined ? {} : { ':before': before }) },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: reader.startKey,
        }),
      ),
    );
    reader.items = Items;
    reader.position = 0;
    reader.startKey = LastEvaluatedKey;
    reader.exhausted = LastEvaluatedKey === undefined;
  };

  await Promise.all(readers.map((reader) => fetch(reader, firstQueryLimit(wanted, readers.length))));
  const merged: Item[] = [];
  while (merged.length < wanted) {
    // The newest item overall is only known while every partition that may hold more shows its next one.
    const usedUp = readers.filter((reader) => reader.position === reader.items.length && !reader.exhausted);
    if (usedUp.length > 0) {
      await Promise.all(usedUp.map((reader) => fetch(reader, wanted - merged.length)));
      continue;
    }
    let newest: PartitionReader | undefined;
    for (const reader of readers) {
      if (reader.position < reader.items.length && (newest === undefined || sortValue(reader, sortKey) > sortValue(newest, sortKey)))
        newest = reader;
    }
    if (newest === undefined) break;
    merged.push(newest.items[newest.position++]!);
  }
  return merged;
}

function sortValue(reader: PartitionReader, sortKey: string): string {
  return reader.items[reader.position]![sortKey] as string;
}
