declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    /** LevelDB directory; in memory when omitted. */
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
    maxItemSizeKb?: number;
  }

  export default function dynalite(options?: DynaliteOptions): Server;
}

/**
 * dynalite's storage layer, which its server builds on: the LevelDB store of a data directory and the
 * functions that derive index entries from items, so that a repair writes them exactly as dynalite does.
 */
declare module 'dynalite/db/index.js' {
  import type { Readable } from 'node:stream';
  import type {
    AttributeValue,
    GlobalSecondaryIndexDescription,
    LocalSecondaryIndexDescription,
    TableDescription,
  } from '@aws-sdk/client-dynamodb';

  /** An item as dynalite keeps it: the wire format's attribute values. */
  export type Item = Record<string, AttributeValue>;

  export type IndexDescription = GlobalSecondaryIndexDescription | LocalSecondaryIndexDescription;

  type Callback = (error?: Error | null) => void;

  /** One table's items, one index's entries or the table descriptions: a key range of the one LevelDB. */
  export interface SubDb {
    createValueStream(): Readable;
    batch(operations: ReadonlyArray<{ type: 'put'; key: string; value: unknown } | { type: 'del'; key: string }>, callback: Callback): void;
  }

  export interface Store {
    /** The LevelDB itself, opening from creation; closing it waits for the writes in flight. */
    readonly db: { open(): Promise<void>; close(callback: Callback): void };
    readonly tableDb: SubDb;
    getItemDb(tableName: string): SubDb;
    getIndexDb(indexType: 'Global' | 'Local', tableName: string, indexName: string): SubDb;
  }

  /** Opens (creating when absent) the LevelDB in `path`; in memory without one. */
  export function create(options: { path?: string }): Store;

  /** The index entries to write and to delete when `existingItem` becomes `item` (either may be null). */
  export function getIndexActions(
    indexes: readonly IndexDescription[],
    existingItem: Item | null,
    item: Item | null,
    table: TableDescription,
  ): {
    puts: Array<{ index: string; key: string; item: Item }>;
    deletes: Array<{ index: string; key: string }>;
  };

  /** An item's size in bytes as DynamoDB counts it for capacity: attribute names and values. */
  export function itemSize(item: Item): number;

  /** The key under which a table keeps `item`. */
  export function createKey(item: Item, table: TableDescription): string;

  /** The key under which an index keeps the entry of `item`. */
  export function createIndexKey(item: Item, table: TableDescription, keySchema: IndexDescription['KeySchema']): string;

  /** Writes the index entries of a change from `existingItem` to `item`: the first half of a put, update or delete. */
  export function updateIndexes(
    store: Store,
    table: TableDescription,
    existingItem: Item | null,
    item: Item | null,
    callback: Callback,
  ): void;
}
