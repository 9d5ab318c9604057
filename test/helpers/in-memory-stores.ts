import type { ApiKeyRecord, ApiKeyStore } from '../../shared/domain/auth/api-key-store';
import {
  isLive,
  type ClaimResult,
  type CompletedRecord,
  type IdempotencyRecord,
  type IdempotencyStore,
  type InProgressRecord,
} from '../../shared/domain/idempotency/idempotency-store';
import type { PetRecord } from '../../shared/domain/pets/pet-schemas';
import type { InsertResult, ListPage, ListQuery, PetStore } from '../../shared/domain/pets/pet-store';
import { createdKey } from '../../shared/dynamodb/pets-table';

/** A PetStore for handler unit tests; ordering follows the DynamoDB store's sort key. */
export class InMemoryPetStore implements PetStore {
  readonly pets = new Map<number, PetRecord>();
  /** The creation token each pet was written with. */
  readonly creationTokens = new Map<number, string>();
  /** When set, every call fails with this error (an outage, a throttle). */
  failWith?: Error;

  async insert(pet: PetRecord, creationToken: string): Promise<InsertResult> {
    this.throwIfFailing();
    const existing = this.pets.get(pet.id);
    if (existing === undefined) {
      this.pets.set(pet.id, pet);
      this.creationTokens.set(pet.id, creationToken);
      return { outcome: 'inserted' };
    }
    return this.creationTokens.get(pet.id) === creationToken ? { outcome: 'exists', existing } : { outcome: 'taken' };
  }

  async get(id: number): Promise<PetRecord | undefined> {
    this.throwIfFailing();
    return this.pets.get(id);
  }

  async list({ status, limit, after }: ListQuery): Promise<ListPage> {
    this.throwIfFailing();
    const key = (pet: { id: number; createdAt: string }) => createdKey(pet.createdAt, pet.id);
    const matching = [...this.pets.values()]
      .filter((pet) => status === undefined || pet.status === status)
      .sort((a, b) => key(b).localeCompare(key(a)))
      .filter((pet) => after === undefined || key(pet) < after);
    const pets = matching.slice(0, limit);
    return matching.length > limit ? { pets, next: key(pets.at(-1)!) } : { pets };
  }

  private throwIfFailing(): void {
    if (this.failWith) throw this.failWith;
  }
}

/** An ApiKeyStore for authenticator unit tests. */
export class InMemoryApiKeyStore implements ApiKeyStore {
  readonly keys = new Map<string, ApiKeyRecord>();
  lookups = 0;
  failWith?: Error;

  async findByHash(keyHash: string): Promise<ApiKeyRecord | undefined> {
    this.lookups++;
    if (this.failWith) throw this.failWith;
    return this.keys.get(keyHash);
  }

  async add(record: ApiKeyRecord): Promise<void> {
    this.keys.set(record.keyHash, record);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return [...this.keys.values()];
  }

  async revoke(keyId: string, at: Date): Promise<boolean> {
    const record = [...this.keys.values()].find((candidate) => candidate.keyId === keyId);
    return record !== undefined && this.revokeByHash(record.keyHash, at);
  }

  async revokeByHash(keyHash: string, at: Date): Promise<boolean> {
    const record = this.keys.get(keyHash);
    if (!record) return false;
    this.keys.set(keyHash, { ...record, revokedAt: record.revokedAt ?? at.toISOString() });
    return true;
  }
}

/**
 * The idempotency store in memory, with the DynamoDB store's rules: a claim succeeds when the key is
 * free, its record expired, or its in-progress record outlived its Lambda deadline.
 */
export class InMemoryIdempotencyStore implements IdempotencyStore {
  readonly records = new Map<string, IdempotencyRecord>();

  async claim(record: InProgressRecord, now: number): Promise<ClaimResult> {
    const existing = this.records.get(record.id);
    if (existing !== undefined && isLive(existing, now)) return { outcome: 'held', record: existing };
    this.records.set(record.id, record);
    return { outcome: 'claimed' };
  }

  async complete(record: CompletedRecord): Promise<void> {
    this.records.set(record.id, record);
  }

  async release(id: string): Promise<void> {
    this.records.delete(id);
  }
}
