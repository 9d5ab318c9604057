import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../http/errors';
import { MAX_ID, toPet, type NewPet, type Pet, type PetStatus } from './pet';
import type { ListPosition, PetStore } from './pet-store';

/** Attempts before giving up on finding a free id; with 2^53 ids a second attempt is already rare. */
const MAX_ID_ATTEMPTS = 5;

/**
 * A uniformly random id in 1..2^53−1. Random ids need no shared counter, so concurrent creates
 * never contend on one hot item; the store's conditional write guarantees uniqueness.
 */
export function randomPetId(): number {
  for (;;) {
    const id = Number(randomBytes(8).readBigUInt64BE() & BigInt(MAX_ID));
    if (id !== 0) return id;
  }
}

export interface CreatePetOptions {
  /** Source of new ids; injectable so tests can force collisions. */
  readonly newId?: () => number;
  readonly now?: () => Date;
}

export async function createPet(store: PetStore, input: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
  const { newId = randomPetId, now = () => new Date() } = options;
  for (let attempt = 0; attempt < MAX_ID_ATTEMPTS; attempt++) {
    const record = { ...input, id: newId(), createdAt: now().toISOString() };
    if (await store.insert(record)) return toPet(record);
  }
  throw new Error(`No free pet id after ${MAX_ID_ATTEMPTS} attempts`);
}

export interface PetsPage {
  readonly pets: Pet[];
  /** Where the next page starts; absent on the last page. */
  readonly next?: ListPosition;
}

export async function listPets(
  store: PetStore,
  query: { status?: PetStatus; limit: number; after?: ListPosition },
): Promise<PetsPage> {
  const page = await store.list(query);
  const last = page.pets.at(-1);
  return {
    pets: page.pets.map(toPet),
    ...(page.hasMore && last ? { next: { id: last.id, createdAt: last.createdAt } } : {}),
  };
}

export async function getPet(store: PetStore, id: number): Promise<Pet> {
  const record = await store.get(id);
  if (record === undefined) throw new NotFoundError(`No pet has id ${id}.`);
  return toPet(record);
}
