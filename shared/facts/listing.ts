/**
 * The settings of listPets' reads that a stage chooses (infra/stages.ts), its functions read at cold
 * start (shared/runtime/function-config.ts) and the store applies (shared/dynamodb/dynamo-pet-store.ts).
 */

/**
 * How many shards a listing index may be spread over: every page of a listing queries each shard, so
 * the count is what a page's read cost grows with (docs/data-model.md).
 */
export const LISTING_SHARDS = { min: 1, max: 32 } as const;

/** Which index status listings read: the sharded one, or the unsharded one until a stage's backfill is done. */
export const STATUS_LISTING_INDEXES = ['sharded', 'unsharded'] as const;
export type StatusListingIndex = (typeof STATUS_LISTING_INDEXES)[number];

/** The longest a listing's first page may be served from an instance's cache, in milliseconds; 0 turns the cache off. */
export const LIST_HEAD_CACHE_MS = { default: 1000, max: 10_000 } as const;

/**
 * Production's listing shards, chosen from `npm run bench -- --listing` (docs/data-model.md, "Listing
 * at scale"): the fewest that keep DynamoDB out of the limits the service can reach, since every
 * uncached page pays a query per shard.
 */
const PRODUCTION_LISTING_SHARDS = 4;

/**
 * Each stage's listing shards: infra/stages.ts gives them to the stages. Staging and the local stage
 * use production's, so that they rehearse how production lists.
 */
export const LISTING_SHARD_COUNT = { staging: PRODUCTION_LISTING_SHARDS, production: PRODUCTION_LISTING_SHARDS } as const;

/**
 * Where a stage is in moving status listings onto the sharded index, one release per step
 * (docs/operations.md, "Sharding the listing indexes"): `backfilling` adds the sharded index and reads
 * the unsharded one while `npm run migrate` runs; `reading-sharded` reads the sharded one and keeps the
 * other for a rollback; `complete` drops the unsharded index.
 */
export type StatusIndexMigration = 'backfilling' | 'reading-sharded' | 'complete';

/** How a stage spreads and reads listPets' indexes. */
export interface ListingConfig {
  /** Listing shards each index is read from: creates are bounded by shards × 1,000 per second per index, and every page queries each shard. */
  readonly shards: number;
  /**
   * The shards creates write to, when fewer than `shards`: set only while a change of the count rolls
   * out, so that every version serving during a deploy reads every shard the others write
   * (docs/operations.md, "Sharding the listing indexes"). `shards` when omitted.
   */
  readonly writeShards?: number;
  /** Where the stage is in moving status listings onto the sharded index. */
  readonly statusIndexMigration: StatusIndexMigration;
  /** The longest listPets serves a first page from an instance's cache, in milliseconds; 0 turns the cache off. */
  readonly headCacheMs: number;
}

/** The shards a stage's creates write to: `writeShards` while a change of the count rolls out, else `shards`. */
export function writeShardsOf(listing: ListingConfig): number {
  return listing.writeShards ?? listing.shards;
}

/** Whether the table still has the unsharded status index at this step of the migration: until it is complete. */
export function keepsUnshardedStatusIndex(migration: StatusIndexMigration): boolean {
  return migration !== 'complete';
}

/** The index status listings read at each step of the migration. */
export function statusListingIndexOf(migration: StatusIndexMigration): StatusListingIndex {
  return migration === 'backfilling' ? 'unsharded' : 'sharded';
}
