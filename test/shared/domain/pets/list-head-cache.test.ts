import { beforeEach, describe, expect, it } from 'vitest';
import { cacheListHead } from '../../../../shared/domain/pets/list-head-cache';
import type { PetRecord, PetStatus } from '../../../../shared/domain/pets/pet-schemas';
import type { PetStore } from '../../../../shared/domain/pets/pet-store';
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

describe('the list head cache', () => {
  it('serves a first page from memory until it is maxAgeMs old, then reads the store again', async () => {
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    await addPet();
    clock += MAX_AGE_MS - 1;
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    clock += 1;
    expect(await listedIds({ limit: 10 })).toEqual([3, 2, 1]);
  });

  it('keeps one first page per status filter and limit', async () => {
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    expect(await listedIds({ limit: 10, status: 'available' })).toEqual([2, 1]);
    await addPet('available');
    await addPet('sold');
    expect(await listedIds({ limit: 10 })).toEqual([2, 1]);
    expect(await listedIds({ limit: 10, status: 'available' })).toEqual([2, 1]);
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
