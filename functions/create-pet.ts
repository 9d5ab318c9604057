import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { createDocumentClient } from '../shared/dynamodb/dynamodb-client';
import { ENV } from '../shared/facts/environment';
import { createHttpHandler } from '../shared/http/handler';
import { apiUrl, parseInput, readIdempotencyKey, readJsonObject } from '../shared/http/request';
import { created } from '../shared/http/responses';
import { DynamoIdempotencyStore } from '../shared/dynamodb/dynamo-idempotency-store';
import { IDEMPOTENT_REPLAYED_HEADER } from '../shared/domain/idempotency/idempotency-key';
import type { IdempotencyStore } from '../shared/domain/idempotency/idempotency-store';
import { DynamoPetStore } from '../shared/dynamodb/dynamo-pet-store';
import { NewPetSchema } from '../shared/domain/pets/pet-schemas';
import type { PetStore } from '../shared/domain/pets/pet-store';
import { makeCreatePetOnce } from '../shared/domain/pets/create-pet-once';
import { countIdempotentReplay, countPetCreated } from '../shared/runtime/metrics';

export interface CreatePetDependencies {
  readonly store: PetStore;
  /** Where Idempotency-Key records live. */
  readonly idempotency: IdempotencyStore;
}

export function createCreatePetHandler({ store, idempotency }: CreatePetDependencies) {
  const createPetOnce = makeCreatePetOnce(store, idempotency);
  return createHttpHandler('createPet', async (event, caller, context) => {
    const input = parseInput(NewPetSchema, readJsonObject(event));
    const idempotencyKey = readIdempotencyKey(event);
    const scope = idempotencyKey === undefined ? undefined : { keyId: caller.keyId, idempotencyKey };
    const { pet, replayed } = await createPetOnce(input, scope, context);
    if (replayed) countIdempotentReplay(event.requestContext.requestId);
    else countPetCreated(event.requestContext.requestId);
    return created(pet, {
      location: apiUrl(event, `${event.rawPath}/${pet.id}`),
      ...(replayed ? { [IDEMPOTENT_REPLAYED_HEADER]: 'true' } : {}),
    });
  });
}

const config = readConfig(FUNCTION_CONFIG.createPet);
const documents = createDocumentClient();

export const handler = createCreatePetHandler({
  store: new DynamoPetStore(documents, config[ENV.petsTable], config[ENV.writeShards]),
  idempotency: new DynamoIdempotencyStore(documents, config[ENV.idempotencyTable]),
});
