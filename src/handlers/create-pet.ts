import { readConfig } from '../runtime/config';
import { FUNCTION_CONFIG } from '../runtime/function-config';
import { createDocumentClient } from '../dynamodb/dynamodb-client';
import { ENV } from '../facts/environment';
import { createHttpHandler } from '../http/handler';
import { apiUrl, parseInput, readIdempotencyKey, readJsonObject } from '../http/request';
import { created } from '../http/responses';
import { DynamoIdempotencyStore } from '../dynamodb/dynamo-idempotency-store';
import { IDEMPOTENT_REPLAYED_HEADER } from '../domain/idempotency/idempotency-key';
import type { IdempotencyStore } from '../domain/idempotency/idempotency-store';
import { DynamoPetStore } from '../dynamodb/dynamo-pet-store';
import { NewPetSchema } from '../domain/pets/pet-schemas';
import type { PetStore } from '../domain/pets/pet-store';
import { makeCreatePetOnce } from '../domain/pets/create-pet-once';
import { countIdempotentReplay, countPetCreated } from '../runtime/metrics';

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

const config = readConfig(FUNCTION_CONFIG['create-pet']);
const documents = createDocumentClient();

export const handler = createCreatePetHandler({
  store: new DynamoPetStore(documents, config[ENV.petsTable], { shards: config[ENV.listingShards] }),
  idempotency: new DynamoIdempotencyStore(documents, config[ENV.idempotencyTable]),
});
