/** How listPets' indexes are spread and read: the one configuration every stage, the local one included, runs. */

/**
 * How many shards a listing index may be spread over: every page of a listing queries each shard, so
 * the count is what a page's read cost grows with (docs/data-model.md).
 */
export const LISTING_SHARDS = { min: 1, max: 32 } as const;

/** How a stage spreads and reads listPets' indexes. */
export interface ListingConfig {
  /** Listing shards each index is spread over and every page reads: creates are bounded by shards × 1,000 per second per index. */
  readonly shards: number;
  /**
   * The shards new pets go to, when fewer than `shards`: set only while a raise of the count rolls out,
   * so that every version serving during the deploy reads every shard the others write to
   * (docs/operations.md, "Changing the listing shard count"). `shards` when omitted.
   */
  readonly writeShards?: number;
}

/**
 * The listing every stage runs: the fewest shards that keep DynamoDB out of the limits the service can
 * reach, since every page pays a query per shard (docs/data-model.md, "Listing at scale: the sharded indexes").
 */
export const LISTING: ListingConfig = { shards: 4 };

/** The shards a stage's new pets go to: `writeShards` while a raise of the count rolls out, else `shards`. */
export function writeShardsOf(listing: ListingConfig): number {
  return listing.writeShards ?? listing.shards;
}
