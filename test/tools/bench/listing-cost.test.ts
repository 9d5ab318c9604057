import { describe, expect, it } from 'vitest';
import { createCostRows, listingCostRows } from '../../../tools/bench/listing-cost-report';
import {
  measureListingCost,
  pageCost,
  pagesPerSecondOfPartition,
  writeUnitsOf,
  type ListingCostResults,
} from '../../../tools/bench/measure-listing-cost';

const options = { petCounts: [200], shardCounts: [1], limits: [20], laterPages: 1, cacheRates: [10], creates: 1 };

describe("the listing cost's arithmetic", () => {
  it('charges a page the sum of its queries, an empty query half a unit, and names the partition charged most', () => {
    const cost = pageCost(
      [
        { partition: 'pets', readUnits: 1 },
        { partition: 'pets#1', readUnits: 0.5 },
        { partition: 'pets#2', readUnits: 0 },
        { partition: 'pets#1', readUnits: 1 },
      ],
      3,
    );
    expect(cost).toEqual({ readUnits: 3, hottestPartitionUnits: 1.5, secondRound: true });
  });

  it('sees no second round when each partition was queried once', () => {
    expect(pageCost([{ partition: 'pets', readUnits: 1 }], 1).secondRound).toBe(false);
  });

  it('allows a partition as many pages per second as its 3,000 read units pay for', () => {
    expect(pagesPerSecondOfPartition(0.5)).toBe(6_000);
    expect(pagesPerSecondOfPartition(2.5)).toBe(1_200);
  });

  it('charges a put once for the item and once per index whose keys it has, each rounded up to 1 KB', () => {
    const indexes = [
      ['collection', 'createdKey'],
      ['statusShard', 'createdKey'],
    ];
    const small = { id: 1, collection: 'pets', createdKey: 'k', statusShard: 'sold' };
    expect(writeUnitsOf(small, indexes)).toBe(3);
    expect(writeUnitsOf({ ...small, statusShard: undefined }, indexes)).toBe(2);
    expect(writeUnitsOf({ ...small, name: 'x'.repeat(1500) }, indexes)).toBe(6);
  });

  it('prints a row per combination, cached columns by rate, and the pages per second of the hottest shard', () => {
    const results: ListingCostResults = {
      options: { ...options, cacheRates: [10, 100] },
      cacheMaxAgeMs: 1000,
      rows: [
        {
          pets: 100_000,
          shards: 8,
          limit: 20,
          firstPage: { readUnits: 4, hottestPartitionUnits: 0.5, secondRound: false },
          laterPageReadUnits: 4.25,
          laterSecondRounds: 0.125,
          cachedFirstPage: [
            { perSecond: 10, readUnits: 0.4 },
            { perSecond: 100, readUnits: 0.04 },
          ],
        },
      ],
      creates: [{ shards: 8, withStatus: 3, withoutStatus: 2, entryUnits: 1, dynaliteReports: 1 }],
    };
    expect(listingCostRows(results)).toEqual([
      expect.objectContaining({
        pets: '100,000',
        shards: 8,
        'first page RRU': 4,
        'later page RRU': 4.25,
        'second round': '13 %',
        'cached, 10/s': 0.4,
        'cached, 100/s': 0.04,
        'uncached head pages/s': '6,000',
      }),
    ]);
    expect(createCostRows(results)).toEqual([
      expect.objectContaining({ shards: 8, 'WRU, with status': 3, 'creates/s per index': '8,000' }),
    ]);
  });
});

describe('the listing cost, measured on dynalite', () => {
  it('grows with the shards a page reads, not with the table, and the head cache divides the first page', async () => {
    const { rows, creates } = await measureListingCost({ ...options, petCounts: [200, 400], shardCounts: [1, 4], cacheRates: [10] });
    const firstPage = (pets: number, shards: number) => rows.find((row) => row.pets === pets && row.shards === shards)!;

    expect(firstPage(200, 4).firstPage.readUnits).toBeGreaterThan(firstPage(200, 1).firstPage.readUnits);
    expect(firstPage(400, 4).firstPage.readUnits).toBe(firstPage(200, 4).firstPage.readUnits);
    expect(firstPage(400, 1).firstPage.readUnits).toBe(firstPage(200, 1).firstPage.readUnits);
    // Spread over four shards, the head's hottest partition is charged less than the one partition of an unsharded index.
    expect(firstPage(200, 4).firstPage.hottestPartitionUnits).toBeLessThan(firstPage(200, 1).firstPage.hottestPartitionUnits);
    for (const row of rows) expect(row.cachedFirstPage[0]!.readUnits).toBeLessThan(row.firstPage.readUnits);
    expect(creates.map((row) => row.withStatus)).toEqual([3, 3]);
  }, 30_000);
});
