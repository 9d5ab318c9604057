/**
 * Key design of the pets table, shared by the DynamoDB store, the CDK construct and the local tables
 * so none can disagree. Access patterns are in docs/data-model.md.
 */
export const PETS_TABLE = {
  partitionKey: 'id',
  /** Every pet, newest first, spread over the listing shards: `collection` is `listingShardKey('pets', shard)`. */
  allPetsIndex: { name: 'pets-by-creation', partitionKey: 'collection', sortKey: 'createdKey' },
  /** Pets of one status, newest first, spread over the listing shards: `statusShard` is `listingShardKey(status, shard)`. Sparse. */
  byStatusIndex: { name: 'pets-by-status-shard', partitionKey: 'statusShard', sortKey: 'createdKey' },
  /** The base of `collection` on every pet item. */
  collection: 'pets',
  /** Identifies the create request that wrote the item (shared/domain/pets/pet-operations.ts); never returned to clients. */
  creationTokenAttribute: 'creationToken',
} as const;

/**
 * The shard a pet's listing entries live in, for good. Ids are uniformly spread, so shards fill evenly;
 * and since `id % n` is below every larger count, raising the count moves no pet and strands none.
 */
export function listingShardOf(id: number, shards: number): number {
  return id % shards;
}

/** A listing shard's partition-key value: shard 0 is the bare value (`pets`), so one shard is the plain listing. */
export function listingShardKey(base: string, shard: number): string {
  return shard === 0 ? base : `${base}#${shard}`;
}

/**
 * The sort key that orders listings: creation time, then id, so two pets created in the same
 * millisecond still have a stable order.
 */
export function createdKey(createdAt: string, id: number): string {
  return `${createdAt}#${id.toString().padStart(16, '0')}`;
}

/** The index attributes a pet item carries when new pets go to `shards` listing shards. */
export function listingAttributes(pet: { readonly id: number; readonly status?: string; readonly createdAt: string }, shards: number) {
  const shard = listingShardOf(pet.id, shards);
  return {
    [PETS_TABLE.allPetsIndex.partitionKey]: listingShardKey(PETS_TABLE.collection, shard),
    [PETS_TABLE.allPetsIndex.sortKey]: createdKey(pet.createdAt, pet.id),
    ...(pet.status === undefined ? {} : { [PETS_TABLE.byStatusIndex.partitionKey]: listingShardKey(pet.status, shard) }),
  };
}
