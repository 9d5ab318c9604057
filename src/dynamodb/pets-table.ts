/**
 * Key design of the pets table, shared by the DynamoDB store, the CDK construct and the local
 * tables so the three cannot disagree. Access patterns are described in docs/data-model.md.
 */
export const PETS_TABLE = {
  partitionKey: 'id',
  /** Every pet, newest first. Partition `collection` is the same for all pets; `createdKey` orders them. */
  allPetsIndex: { name: 'pets-by-creation', partitionKey: 'collection', sortKey: 'createdKey' },
  /** Pets of one status, newest first. Sparse: pets without a status are not in it. */
  byStatusIndex: { name: 'pets-by-status', partitionKey: 'status', sortKey: 'createdKey' },
  /** The value of `collection` on every pet item. */
  collection: 'pets',
  /** Identifies the create request that wrote the item (src/domain/pets/pet-operations.ts); never returned to clients. */
  creationTokenAttribute: 'creationToken',
} as const;

/**
 * The sort key that orders listings: creation time, then id, so two pets created in the same
 * millisecond still have a stable order.
 */
export function createdKey(createdAt: string, id: number): string {
  return `${createdAt}#${id.toString().padStart(16, '0')}`;
}
