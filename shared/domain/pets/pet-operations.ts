import { hash, randomFillSync } from 'node:crypto';
import { IdempotencyKeyReusedError } from '../idempotency/idempotency-errors';
import type { Outcome } from '../idempotency/idempotent-operation';
import { isSamePet, MAX_ID, toPet, type NewPet, type Pet, type PetRecord, type PetStatus } from './pet-schemas';
import { PetNotFoundError } from './pet-errors';
import type { ListPosition, PetStore } from './pet-store';

/** Ids tried before giving up; with 2^53 ids a second one is already rare. */
const MAX_ID_ATTEMPTS = 5;

/**
 * The id of a create request's n-th candidate, derived from its creation token: uniformly spread, so no
 * shared counter is needed, and the same for every attempt, so a retry lands on the id an earlier attempt
 * may have written (docs/idempotency.md).
 */
export function petIdFor(creationToken: string, candidate: number): number {
  const digest = hash('sha256', `${creationToken}#${candidate}`, 'buffer');
  return Number(digest.readBigUInt64BE() % BigInt(MAX_ID)) + 1;
}

const TOKEN_BYTES = 16;
/** Random bytes drawn for 256 tokens at a time, as Node's randomUUID does, to spare a call into OpenSSL per request. */
const randomPool = Buffer.alloc(256 * TOKEN_BYTES);
let randomPoolOffset = randomPool.length;

/** A creation token for a request without an Idempotency-Key: 128 random bits. */
export function randomCreationToken(): string {
  if (randomPoolOffset === randomPool.length) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  const start = randomPoolOffset;
  randomPoolOffset += TOKEN_BYTES;
  return randomPool.toString('base64url', start, randomPoolOffset);
}

export interface CreatePetOptions {
  /** Identifies the request across all its attempts and retries (see PetStore.insert). */
  readonly creationToken: string;
  readonly now?: () => Date;
}

/**
 * Stores a new pet exactly once per creation token. When the pet is already there from an earlier
 * attempt of the same request, that pet is the answer (`replayed` when an earlier request, not this
 * one, wrote it); with another body it is the same key reused, IdempotencyKeyReusedError.
 */
export async function createPet(store: PetStore, input: NewPet, options: CreatePetOptions): Promise<Outcome<{ pet: Pet }>> {
  const createdAt = (options.now ?? (() => new Date()))().toISOString();
  for (let candidate = 0; candidate < MAX_ID_ATTEMPTS; candidate++) {
    const record: PetRecord = { ...input, id: petIdFor(options.creationToken, candidate), createdAt };
    const result = await store.insert(record, options.creationToken);
    if (result.outcome === 'inserted') return { pet: toPet(record), replayed: false };
    if (result.outcome === 'taken') continue;
    if (!isSamePet(result.existing, input)) throw new IdempotencyKeyReusedError();
    return { pet: toPet(result.existing), replayed: result.existing.createdAt !== createdAt };
  }
  throw new Error(`No free pet id after ${MAX_ID_ATTEMPTS} attempts`);
}

export interface PetsPage {
  readonly pets: Pet[];
  /** Where the next page starts, as the store said; absent on the last page. */
  readonly next?: ListPosition;
}

export async function listPets(store: PetStore, query: { status?: PetStatus; limit: number; after?: ListPosition }): Promise<PetsPage> {
  const { pets, next } = await store.list(query);
  return { pets: pets.map(toPet), ...(next === undefined ? {} : { next }) };
}

export async function getPet(store: PetStore, id: number): Promise<Pet> {
  const record = await store.get(id);
  if (record === undefined) throw new PetNotFoundError(id);
  return toPet(record);
}
