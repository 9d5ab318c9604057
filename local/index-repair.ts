import type { TableDescription } from '@aws-sdk/client-dynamodb';
import { create, createIndexKey, getIndexActions, type IndexDescription, type Item, type Store, type SubDb } from 'dynalite/db/index.js';
import { isDeepStrictEqual } from 'node:util';

/** What the repair changed in one index. */
export interface IndexRepair {
  readonly table: string;
  readonly index: string;
  /** Entries with no item under their key, or whose item no longer belongs there: dropped. */
  readonly removed: number;
  /** Entries an item should have and lacked, or had with other content: written from the item. */
  readonly restored: number;
}

/**
 * Makes every secondary index in a dynalite data directory agree with its items again, before dynalite
 * opens it: dynalite writes index entries and item separately, so a crash between them leaves a pet
 * listed but not found. Items are the truth (docs/data-model.md, "`DATA_DIR` after a crash").
 */
export async function repairIndexes(dataDir: string): Promise<IndexRepair[]> {
  const store = create({ path: dataDir });
  try {
    await store.db.open().catch((error: Error) => {
      // LevelDB's lock file: without this, the next read fails with an error about a closed iterator.
      if ((error.cause as { code?: string } | undefined)?.code !== 'LEVEL_LOCKED') throw error;
      throw new Error(`DATA_DIR ${dataDir} is in use by another process (another npm start?); stop it or choose another directory.`);
    });
    const repairs: IndexRepair[] = [];
    for (const table of await valuesOf<TableDescription>(store.tableDb)) repairs.push(...(await repairTable(store, table)));
    return repairs.filter((repair) => repair.removed + repair.restored > 0);
  } finally {
    await new Promise<void>((resolve, reject) => store.db.close((error) => (error ? reject(error) : resolve())));
  }
}

/** One line for a developer: which indexes were out of step with their items, and what was done. */
export function describeIndexRepairs(repairs: readonly IndexRepair[]): string {
  const changes = repairs.map(({ table, index, removed, restored }) => `${table} ${index} ${removed} removed, ${restored} restored`);
  return `DATA_DIR: repaired index entries a crash left out of step with their items: ${changes.join('; ')}`;
}

async function repairTable(store: Store, table: TableDescription): Promise<IndexRepair[]> {
  const indexTypes = [
    { type: 'Global', indexes: table.GlobalSecondaryIndexes ?? [] },
    { type: 'Local', indexes: table.LocalSecondaryIndexes ?? [] },
  ] as const;
  if (indexTypes.every(({ indexes }) => indexes.length === 0)) return [];
  const tableName = table.TableName!;
  const items = await valuesOf<Item>(store.getItemDb(tableName));
  const repairs: IndexRepair[] = [];
  for (const { type, indexes } of indexTypes) {
    for (const index of indexes) {
      const wanted = wantedEntries(items, index, table);
      repairs.push({
        table: tableName,
        index: index.IndexName!,
        ...(await reconcile(store.getIndexDb(type, tableName, index.IndexName!), wanted, index, table)),
      });
    }
  }
  return repairs;
}

/** The entries the index holds when it agrees with `items`, by key, as LevelDB would give them back. */
function wantedEntries(items: readonly Item[], index: IndexDescription, table: TableDescription): Map<string, unknown> {
  const entries = new Map<string, unknown>();
  for (const item of items) {
    for (const put of getIndexActions([index], null, item, table).puts) entries.set(put.key, JSON.parse(JSON.stringify(put.item)));
  }
  return entries;
}

/** Drops the entries not wanted, writes the wanted ones missing or different, in one batch. */
async function reconcile(
  indexDb: SubDb,
  wanted: Map<string, unknown>,
  index: IndexDescription,
  table: TableDescription,
): Promise<{ removed: number; restored: number }> {
  const operations: Parameters<SubDb['batch']>[0][number][] = [];
  let removed = 0;
  for (const entry of await valuesOf<Item>(indexDb)) {
    const key = createIndexKey(entry, table, index.KeySchema);
    const want = wanted.get(key);
    if (want === undefined) {
      operations.push({ type: 'del', key });
      removed++;
    } else if (isDeepStrictEqual(entry, want)) {
      wanted.delete(key);
    }
  }
  for (const [key, value] of wanted) operations.push({ type: 'put', key, value });
  if (operations.length > 0)
    await new Promise<void>((resolve, reject) => indexDb.batch(operations, (error) => (error ? reject(error) : resolve())));
  return { removed, restored: wanted.size };
}

async function valuesOf<T>(subDb: SubDb): Promise<T[]> {
  return (await subDb.createValueStream().toArray()) as T[];
}
