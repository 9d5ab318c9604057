import type { PetRecord, PetStatus } from './pet';

/** Where a listing page ended: the last pet returned. */
export interface ListPosition {
  readonly id: number;
  readonly createdAt: string;
}

export interface ListQuery {
  readonly status?: PetStatus;
  readonly limit: number;
  /** Start after this pet; omit for the first page. */
  readonly after?: ListPosition;
}

export interface ListPage {
  /** Newest first. */
  readonly pets: PetRecord[];
  /** Whether more pets match after the last one returned. */
  readonly hasMore: boolean;
}

/** Persistence of pets. One implementation talks to DynamoDB; tests may use an in-memory one. */
export interface PetStore {
  /** Stores a new pet; resolves false, storing nothing, when its id is already taken. */
  insert(pet: PetRecord): Promise<boolean>;
  get(id: number): Promise<PetRecord | undefined>;
  list(query: ListQuery): Promise<ListPage>;
}
