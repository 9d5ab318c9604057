import * as v from 'valibot';
import { readConfig, RequiredString } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { ENV } from '../shared/environment';
import { NotFoundError } from '../shared/http/errors';
import { createHttpHandler } from '../shared/http/handler';
import { PetIdPathSchema } from '../shared/http/pet-parameters';
import { ok } from '../shared/http/responses';
import { DynamoPetStore } from '../shared/pets/dynamo-pet-store';
import type { PetStore } from '../shared/pets/pet-store';
import { getPet } from '../shared/pets/pet-operations';

export function createGetPetHandler({ store }: { readonly store: PetStore }) {
  return createHttpHandler('getPet', async (event) => {
    const path = v.safeParse(PetIdPathSchema, event.pathParameters);
    if (!path.success) throw new NotFoundError();
    return ok(await getPet(store, path.output.petId));
  });
}

const config = readConfig({ [ENV.petsTable]: RequiredString });

export const handler = createGetPetHandler({ store: new DynamoPetStore(createDocumentClient(), config[ENV.petsTable]) });
