import type { PetRecord, PetStatus } from './pet-schemas';

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

/** What became of an insert. */
export type InsertResult =
  | { readonly outcome: 'inserted' }
  /** The id already holds a pet written with the same creation token: an earlier attempt of the same request landed. */
  | { readonly outcome: 'exists'; readonly existing: PetRecord }
  /** The id holds another request's pet; nothing was stored. */
  | { readonly outcome: 'taken' };

/** Persistence of pets. One implementation talks to DynamoDB; tests may use an in-memory one. */
export interface PetStore {
  /**
   * Stores a new pet unless its id is taken. `creationToken` identifies the create request and is kept
   * with the pet: a write that finds the id taken by its own token is the same request's earlier
   * attempt (the SDK retried a write whose answer was lost, or the client retried with its
   * Idempotency-Key), not a collision.
   */
  insert(pet: PetRecord, creationToken: string): Promise<InsertResult>;
  get(id: number): Promise<PetRecord | undefined>;
  list(query: ListQuery): Promise<ListPage>;
}
