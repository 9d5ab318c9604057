import { makeIdempotentOperation } from '../idempotency/idempotent-operation';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { NewPet } from './pet-schemas';
import type { PetStore } from './pet-store';
import { createPet, randomCreationToken } from './pet-operations';

// Apart from pet-operations.ts so only the create function bundles the idempotency code.

/**
 * createPet as the API runs it: idempotent per Idempotency-Key (scoped to the API key), exactly
 * once per request without one. See docs/idempotency.md.
 */
export function makeCreatePetOnce(store: PetStore, idempotency: IdempotencyStore) {
  return makeIdempotentOperation({
    name: 'createPet',
    store: idempotency,
    operation: (input: NewPet, requestToken) => createPet(store, input, { creationToken: requestToken ?? randomCreationToken() }),
  });
}
