import * as v from 'valibot';
import { readConfig } from '../runtime/config';
import { FUNCTION_CONFIG } from '../runtime/function-config';
import { createDocumentClient } from '../dynamodb/dynamodb-client';
import { ENV } from '../facts/environment';
import { NotFoundError } from '../http/errors';
import { createHttpHandler } from '../http/handler';
import { PetIdPathSchema } from '../http/pet-parameters';
import { ok } from '../http/responses';
import { DynamoPetStore } from '../dynamodb/dynamo-pet-store';
import type { PetStore } from '../domain/pets/pet-store';
import { getPet } from '../domain/pets/pet-operations';

export function createGetPetHandler({ store }: { readonly store: PetStore }) {
  return createHttpHandler('getPet', async (event) => {
    const path = v.safeParse(PetIdPathSchema, event.pathParameters);
    if (!path.success) throw new NotFoundError();
    return ok(await getPet(store, path.output.petId));
  });
}

const config = readConfig(FUNCTION_CONFIG['get-pet']);

// getPet reads by id alone, so the listing's shards do not matter to it.
export const handler = createGetPetHandler({ store: new DynamoPetStore(createDocumentClient(), config[ENV.petsTable], { shards: 1 }) });
