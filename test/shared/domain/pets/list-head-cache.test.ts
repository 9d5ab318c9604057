import { beforeEach, describe, expect, it } from 'vitest';
import { cacheListHead, HOT_HEAD_PAGES_PER_SECOND } from '../../../../shared/domain/pets/list-head-cache';
import type { PetRecord, PetStatus } from '../../../../shared/domain/pets/pet-schemas';
import type { PetStore } from '../../../../shared/domain/pets/pet-store';
import { StoreUnavailableError } from '../../../../shared/domain/store-errors';
import { InMemoryPetStore } from '../../../helpers/in-memory-stores';

const MAX_AGE_MS = 1_000;

let store: InMemoryPetStore;
let clock: number;
let cached: PetStore;
let created = 0;

/** Stores a pet created `secondsAgo` before a fixed moment, by default a second after the last one, and returns its id. */
async function addPet(status: PetStatus = 'available', secondsAgo = -created): Promise<number> {
  created += 1;
  const pet: PetRecord = {
    id: created,
    name: `Pet ${created}`,
    categoryId: 1,
    status,
    createdAt: new Date(Date.UTC(2026, 10, 27) - secondsAgo * 1000).toISOString(),
  };
  await store.insert(pet, `token-${created}`);
  return pet.id;
}

async function listedIds(query: Parameters<PetStore['list']>[0]): Promise<number[]> {
  return (await cached.list(query)).pets.map((pet) => pet.id);
}

beforeEach(async () => {
  store = new InMemoryPetStore();
  clock = 0;
  created = 0;
  cached = cacheListHead(store, { maxAgeMs: MAX_AGE_MS, now: () => clock });
  await addPet();
  await addPet();
});

/** Asks for the first page `times` times at `perSecond` on the test clock, as one instance would serve them; the last answer's ids. */
async function askAtRate(query: Parameters<PetStore['list']>[0], times: number, perSecond: number): Promise<number[]> {
  let ids: number[] = [];
  for (let ask = 0; ask < times; ask++) {
    if (ask > 0) clock += 1000 / perSecond;
    ids = await listedIds(query);
  }
  return ids;
}

describe('the list head cache', () => {
  it(`reads the store for every first page at half the hot rate: a pet just stored is in the next one`, async () => {
    for (let ask = 0; ask < 3 * HOT_HEAD_PAGES_PER_SECOND; ask++) {
      const id = await addPet();
      expect((await listedIds({ limit: 10 }))[0]).toBe(id);
      clock += 1000 / (HOT_HEAD_PAGES_PER_SECOND / 2);
    }
  });

  it(`serves a hot first page (${HOT_HEAD_PAGES_PER_SECOND} a second or more) from memory until it is maxAgeMs old, then reads the store again`, async () => {
    // At 100 a second the tenth ask, at 90 ms, is the first hot one: the store last answered the ninth, at 80 ms.
    expect(await askAtRate({ limit: 10 }, HOT_HEAD_PAGES_PER_SECOND, 100)).toEqual([2, 1]);
    const readAt = clock - 10;
    await addPet();
    while (clock + 10 < readAt + MAX_AGE_MS) {
      clock += 10;
      expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    }
    clock = readAt + MAX_AGE_MS;
    expect(await listedIds({ limit: 10 })).toEqual([3, 2, 1]);
  });

  it('reads the store again as soon as the listing cools below the rate', async () => {
    await askAtRate({ limit: 10 }, 2 * HOT_HEAD_PAGES_PER_SECOND, 100);
    await addPet();
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    // A second with no ask: the oldest of the last asks is more than a second old.
    clock += 1000;
    expect(await listedIds({ limit: 10 })).toEqual([3, 2, 1]);
  });

  it('judges and keeps each status filter and limit on its own', async () => {
    await askAtRate({ limit: 10 }, HOT_HEAD_PAGES_PER_SECOND, 100);
    await askAtRate({ limit: 10, status: 'available' }, HOT_HEAD_PAGES_PER_SECOND, 100);
    await addPet('available');
    await addPet('sold');
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    expect(await listedIds({ limit: 10, status: 'available' })).toEqual([2, 1]);
    // Quiet, these read the store.
    expect(await listedIds({ limit: 9 })).toEqual([4, 3, 2, 1]);
    expect(await listedIds({ limit: 10, status: 'sold' })).toEqual([4]);
  });

  it('never caches a page that starts after a cursor, nor serves one from the first page', async () => {
    const after = (await store.list({ limit: 1 })).next!;
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    expect(await listedIds({ limit: 10, after })).toEqual([1]);
    const older = await addPet('available', 60);
    expect(await listedIds({ limit: 10, after })).toEqual([1, older]);
  });

  it('answers with a copy younger than maxAgeMs when the store refuses a read, and goes on doing so until a read succeeds', async () => {
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    await addPet();
    clock += 500;
    store.failWith = new StoreUnavailableError(new Error('throttled'));
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    // Quiet, but refused: no read until the copy is maxAgeMs old.
    store.failWith = undefined;
    clock += 400;
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    clock += 100;
    expect(await listedIds({ limit: 10 })).toEqual([3, 2, 1]);
    await addPet();
    clock += 100;
    expect(await listedIds({ limit: 10 })).toEqual([4, 3, 2, 1]);
  });

  it('passes the refusal on when no copy is younger than maxAgeMs, and any other failure always', async () => {
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    store.failWith = new Error('a bug');
    await expect(cached.list({ limit: 10 })).rejects.toThrow('a bug');
    clock += MAX_AGE_MS;
    store.failWith = new StoreUnavailableError(new Error('throttled'));
    await expect(cached.list({ limit: 10 })).rejects.toThrow(StoreUnavailableError);
  });

  it('never caches a failure: the next listing reads the store, at once', async () => {
    store.failWith = new Error('throttled');
    await expect(cached.list({ limit: 10 })).rejects.toThrow('throttled');
    store.failWith = undefined;
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
  });

  it('passes creates and gets straight to the store', async () => {
    const pet: PetRecord = { id: 99, name: 'Direct', categoryId: 1, createdAt: '2026-11-27T00:00:00.000Z' };
    expect(await cached.insert(pet, 'token-99')).toEqual({ outcome: 'inserted' });
    expect(await cached.get(99)).toEqual(pet);
  });

  it('is the store itself when maxAgeMs is 0', () => {
    expect(cacheListHead(store, { maxAgeMs: 0, now: () => clock })).toBe(store);
  });
});
