import * as v from 'valibot';
import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { createDocumentClient } from '../shared/dynamodb/dynamodb-client';
import { ENV } from '../shared/facts/environment';
import { NotFoundError } from '../shared/http/errors';
import { createHttpHandler } from '../shared/http/handler';
import { PetIdPathSchema } from '../shared/http/pet-parameters';
import { ok } from '../shared/http/responses';
import { DynamoPetStore } from '../shared/dynamodb/dynamo-pet-store';
import type { PetStore } from '../shared/domain/pets/pet-store';
import { getPet } from '../shared/domain/pets/pet-operations';

export function createGetPetHandler({ store }: { readonly store: PetStore }) {
  return createHttpHandler('getPet', async (event) => {
    const path = v.safeParse(PetIdPathSchema, event.pathParameters);
    if (!path.success) throw new NotFoundError();
    return ok(await getPet(store, path.output.petId));
  });
}

const config = readConfig(FUNCTION_CONFIG.getPet);

// getPet reads by key and uses no listing shard.
export const handler = createGetPetHandler({ store: new DynamoPetStore(createDocumentClient(), config[ENV.petsTable], 1) });
