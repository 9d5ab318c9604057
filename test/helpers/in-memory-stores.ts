import type { ApiKeyRecord, ApiKeyStore } from '../../shared/auth/api-key-store';
import type { PetRecord } from '../../shared/pets/pet';
import type { ListPage, ListQuery, PetStore } from '../../shared/pets/pet-store';
import { createdKey } from '../../shared/pets/pets-table';

/** A PetStore for handler unit tests; ordering follows the DynamoDB store's sort key. */
export class InMemoryPetStore implements PetStore {
  readonly pets = new Map<number, PetRecord>();
  /** When set, every call fails with this error (an outage, a throttle). */
  failWith?: Error;

  async insert(pet: PetRecord): Promise<boolean> {
    this.throwIfFailing();
    if (this.pets.has(pet.id)) return false;
    this.pets.set(pet.id, pet);
    return true;
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
      .filter((pet) => after === undefined || key(pet) < key(after));
    return { pets: matching.slice(0, limit), hasMore: matching.length > limit };
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
    if (!record) return false;
    this.keys.set(record.keyHash, { ...record, revokedAt: record.revokedAt ?? at.toISOString() });
    return true;
  }
}
