import { dollars, round } from './format';
import { PARTITION_LIMITS, pagesPerSecondOfPartition, type ListingCostResults } from './measure-listing-cost';
import { PRICES } from './prices';
import { HOT_HEAD_PAGES_PER_SECOND } from '../../shared/domain/pets/list-head-cache';

/** The listing table's rows, one per pet count, shard count and limit, as `npm run bench` prints them. */
export function listingCostRows({ rows }: ListingCostResults): Record<string, string | number>[] {
  return rows.map((row) => ({
    pets: row.pets.toLocaleString('en'),
    shards: row.shards,
    limit: row.limit,
    'first page RRU': round(row.firstPage.readUnits),
    'later page RRU': round(row.laterPageReadUnits),
    'second round': `${Math.round(row.laterSecondRounds * 100)} %`,
    ...Object.fromEntries(row.cachedFirstPage.map(({ perSecond, readUnits }) => [`cached, ${perSecond}/s`, round(readUnits)])),
    'uncached head pages/s': pagesPerSecondOfPartition(row.firstPage.hottestPartitionUnits).toLocaleString('en'),
    'per M first pages': dollars(row.firstPage.readUnits * PRICES.dynamoDbPerMillionReadUnits),
  }));
}

/** The create table's rows, one per shard count. */
export function createCostRows({ creates }: ListingCostResults): Record<string, string | number>[] {
  return creates.map((row) => ({
    shards: row.shards,
    'WRU, with status': round(row.withStatus),
    'WRU, without': round(row.withoutStatus),
    'dynalite reports': round(row.dynaliteReports),
    'creates/s per index': ((row.shards * PARTITION_LIMITS.writeUnitsPerSecond) / row.entryUnits).toLocaleString('en'),
  }));
}

/** Prints the listing section: what a page and a create cost at each shard count. */
export function printListingCost(results: ListingCostResults): void {
  const { options, cacheMaxAgeMs } = results;
  console.log(
    `\nListing cost: read units (RRU) per page as DynamoDB charges them (per Query, the items' total size rounded up to 4 KB, halved; at least half a unit), ` +
      `first page and ${options.laterPages} later pages from random cursors ("second round": the share of those whose merge queried a shard again). ` +
      `Cached: first-page RRU per request at that rate to one instance, cache ${cacheMaxAgeMs} ms, engaged from ${HOT_HEAD_PAGES_PER_SECOND} a second (below, every first page reads the index). Uncached head pages/s: what the hottest shard's ` +
      `${PARTITION_LIMITS.readUnitsPerSecond.toLocaleString('en')} RRU/s allow. Priced at ${PRICES.region}'s on-demand read price (tools/bench/prices.ts).`,
  );
  console.table(listingCostRows(results));
  console.log(
    `Write units (WRU) per create as DynamoDB charges them: the item plus its entry in each index it is in, each rounded up to 1 KB; dynalite reports the item alone. ` +
      `Creates/s per index: the shards × ${PARTITION_LIMITS.writeUnitsPerSecond.toLocaleString('en')} WRU/s of their partitions.`,
  );
  console.table(createCostRows(results));
}
