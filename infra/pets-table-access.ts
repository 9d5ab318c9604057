import type { OperationId } from '../shared/facts/routes';

/** DynamoDB access a route's function may have on the pets table (PetsTable.grantAccess). */
export type PetsTableAccess = 'query' | 'get' | 'put';

/**
 * Each operation's only DynamoDB actions on the pets table, by OperationId: a new operation without
 * an entry here does not compile. Here rather than in the route table, which every function
 * bundles: an IAM change redeploys no code.
 */
export const PETS_TABLE_ACCESS: Readonly<Record<OperationId, readonly PetsTableAccess[]>> = {
  listPets: ['query'],
  // GetItem: a conditional put that fails is read back to tell our own earlier write from a collision.
  createPet: ['put', 'get'],
  getPet: ['get'],
};
