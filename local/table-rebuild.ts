import { setTimeout } from 'node:timers/promises';
import {
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  ScanCommand,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';

/** What a rebuild changed: the indexes the table gained and lost, and the items it carried over. */
export interface TableRebuild {
  readonly table: string;
  readonly added: readonly string[];
  readonly dropped: readonly string[];
  readonly items: number;
}

/** The copy a rebuild keeps of the old table's items until they are back: a crash mid-rebuild loses none. */
export function rebuildBackupName(table: string): string {
  return `${table}.before-rebuild`;
}

/**
 * Makes a table's secondary indexes those of `definition` by rebuilding it, since dynalite cannot add
 * or drop an index on a table: the items are copied to a backup table, the table is deleted and created
 * anew, and the items are put back (then `afterRestore` runs, e.g. a backfill of what the new indexes
 * need). Run again after a crash, it finishes the rebuild from the backup. Returns what it changed,
 * or undefined when the table already had the indexes.
 */
export async function rebuildIfIndexesDiffer(
  client: DynamoDBClient,
  definition: CreateTableCommandInput,
  afterRestore: () => Promise<void> = async () => {},
): Promise<TableRebuild | undefined> {
  const table = definition.TableName!;
  const backup = rebuildBackupName(table);
  const current = await describe(client, table);
  const unfinished = (await describe(client, backup)) !== undefined;
  const outdated = current !== undefined && indexesOf(current) !== indexesOf(definition);
  if (!outdated && !unfinished) return undefined;
  const change = current === undefined ? { added: [], dropped: [] } : indexChange(current, definition);

  if (outdated) {
    // A backup from a rebuild that stopped before the table was deleted may be partial: start it again.
    if (unfinished) await deleteTable(client, backup);
    await createTable(client, {
      TableName: backup,
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: definition.KeySchema,
      AttributeDefinitions: definition.AttributeDefinitions?.filter((attribute) =>
        definition.KeySchema?.some((key) => key.AttributeName === attribute.AttributeName),
      ),
    });
    await copyItems(client, table, backup);
    await deleteTable(client, table);
  }
  if (outdated || current === undefined) await createTable(client, definition);
  const items = await copyItems(client, backup, table);
  await afterRestore();
  await deleteTable(client, backup);
  return { table, ...change, items };
}

/** One line for a developer: which tables were rebuilt, and why. */
export function describeTableRebuilds(rebuilds: readonly TableRebuild[], note = ''): string {
  const changes = rebuilds.map(({ table, added, dropped, items }) => {
    const indexes = [...added.map((name) => `added ${name}`), ...dropped.map((name) => `dropped ${name}`)];
    return `${table} (${indexes.length > 0 ? indexes.join(', ') : 'finished after an interruption'}; ${items} items kept)`;
  });
  return `DATA_DIR: rebuilt tables whose indexes predate the current design: ${changes.join('; ')}${note}`;
}

/** The secondary indexes of a table, as comparable text: name, keys and projection type of each. */
function indexesOf(table: Pick<TableDescription, 'GlobalSecondaryIndexes' | 'LocalSecondaryIndexes'>): string {
  return JSON.stringify(
    [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])]
      .map((index) => ({
        name: index.IndexName,
        keys: index.KeySchema?.map((key) => `${key.AttributeName} ${key.KeyType}`),
        projection: index.Projection?.ProjectionType,
      }))
      .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '')),
  );
}

function indexChange(current: TableDescription, definition: CreateTableCommandInput): { added: string[]; dropped: string[] } {
  const names = (table: Pick<TableDescription, 'GlobalSecondaryIndexes' | 'LocalSecondaryIndexes'>) =>
    [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])].map((index) => index.IndexName!);
  const before = names(current);
  const after = names(definition);
  return { added: after.filter((name) => !before.includes(name)), dropped: before.filter((name) => !after.includes(name)) };
}

async function describe(client: DynamoDBClient, table: string): Promise<TableDescription | undefined> {
  try {
    return (await client.send(new DescribeTableCommand({ TableName: table }))).Table;
  } catch (error) {
    if (error instanceof ResourceNotFoundException) return undefined;
    throw error;
  }
}

/** Creates a table and returns once it is ACTIVE: dynalite flips the status on a timer after answering. */
async function createTable(client: DynamoDBClient, definition: CreateTableCommandInput): Promise<void> {
  await client.send(new CreateTableCommand(definition));
  while ((await describe(client, definition.TableName!))?.TableStatus !== 'ACTIVE') await setTimeout(10);
}

/** Deletes a table and returns once it is gone, so one of the same name can be created. */
async function deleteTable(client: DynamoDBClient, table: string): Promise<void> {
  await client.send(new DeleteTableCommand({ TableName: table }));
  while ((await describe(client, table)) !== undefined) await setTimeout(10);
}

/** Puts every item of one table into another, as stored (no conversion); returns how many. */
async function copyItems(client: DynamoDBClient, from: string, to: string): Promise<number> {
  let copied = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: from, ExclusiveStartKey: start, ConsistentRead: true }));
    const items = page.Items ?? [];
    for (let index = 0; index < items.length; index += 25) {
      let requests = items.slice(index, index + 25).map((Item) => ({ PutRequest: { Item } }));
      while (requests.length > 0) {
        const { UnprocessedItems } = await client.send(new BatchWriteItemCommand({ RequestItems: { [to]: requests } }));
        requests = (UnprocessedItems?.[to] ?? []) as typeof requests;
      }
    }
    copied += items.length;
    start = page.LastEvaluatedKey;
  } while (start);
  return copied;
}
