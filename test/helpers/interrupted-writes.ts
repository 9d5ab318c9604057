import type { TableDescription } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { create, createKey, updateIndexes, type Item, type Store } from 'dynalite/db/index.js';

/**
 * The states `kill -9` leaves in a dynalite data directory, written deterministically, with dynalite's
 * own write path, in a directory no dynalite has open. dynalite writes an item's index entries, then
 * the item, as separate LevelDB writes: these stop between the two.
 */

type Attributes = object;

/**
 * A put, update or delete of `tableName` killed after its index entries were written and before its
 * item was: `before` is the item the table holds (null for a put), `after` the one being written
 * (null for a delete).
 */
export function interruptWrite(dataDir: string, tableName: string, before: Attributes | null, after: Attributes | null): Promise<void> {
  return withStore(dataDir, async (store) => {
    const table = await tableNamed(store, tableName);
    await new Promise<void>((resolve, reject) =>
      updateIndexes(store, table, before && toItem(before), after && toItem(after), (error) => (error ? reject(error) : resolve())),
    );
  });
}

/** Removes an item and nothing else: what a put killed between its index entries and its item leaves, once it was written. */
export function removeItemOnly(dataDir: string, tableName: string, item: Attributes): Promise<void> {
  return withStore(dataDir, async (store) => {
    const table = await tableNamed(store, tableName);
    const key = createKey(toItem(item), table);
    await new Promise<void>((resolve, reject) =>
      store.getItemDb(tableName).batch([{ type: 'del', key }], (error) => (error ? reject(error) : resolve())),
    );
  });
}

async function withStore(dataDir: string, write: (store: Store) => Promise<void>): Promise<void> {
  const store = create({ path: dataDir });
  try {
    await write(store);
  } finally {
    await new Promise<void>((resolve, reject) => store.db.close((error) => (error ? reject(error) : resolve())));
  }
}

async function tableNamed(store: Store, tableName: string): Promise<TableDescription> {
  const tables = (await store.tableDb.createValueStream().toArray()) as TableDescription[];
  const table = tables.find((candidate) => candidate.TableName === tableName);
  if (table === undefined) throw new Error(`No table ${tableName} in the data directory`);
  return table;
}

function toItem(attributes: Attributes): Item {
  return marshall(attributes, { removeUndefinedValues: true }) as Item;
}
