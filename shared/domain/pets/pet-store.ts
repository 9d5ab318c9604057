import type { PetRecord, PetStatus } from './pet-schemas';

/** Where a listing page ended, as the store issues it and takes it back; opaque everywhere else. */
export type ListPosition = string;

export interface ListQuery {
  readonly status?: PetStatus;
  readonly limit: number;
  /** Start after this pet; omit for the first page. */
  readonly after?: ListPosition;
}

export interface ListPage {
  /** Newest first. */
  readonly pets: PetRecord[];
  /** Where the next page starts; absent when no pet matches after the last one returned. */
  readonly next?: ListPosition;
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
   * Stores a new pet unless its id is taken. `creationToken` is kept with the pet: an id taken by the same
   * token is this request's earlier attempt (a retried write or a keyed retry), not a collision.
   */
  insert(pet: PetRecord, creationToken: string): Promise<InsertResult>;
  get(id: number): Promise<PetRecord | undefined>;
  list(query: ListQuery): Promise<ListPage>;
}
