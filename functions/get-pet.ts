import * as v from 'valibot';
import { readConfig, RequiredString } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { NotFoundError } from '../shared/http/errors';
import { createHttpHandler } from '../shared/http/handler';
import { ok } from '../shared/http/responses';
import { DynamoPetStore } from '../shared/pets/dynamo-pet-store';
import { PetIdSchema } from '../shared/pets/pet';
import type { PetStore } from '../shared/pets/pet-store';
import { getPet } from '../shared/pets/pets';

/** An id in its canonical decimal form; `007`, `7.0` or `abc` name no pet, so they are 404 too. */
const PetIdPathSchema = v.pipe(v.string(), v.regex(/^[1-9]\d{0,15}$/), v.transform(Number), PetIdSchema);

export function createGetPetHandler({ store }: { readonly store: PetStore }) {
  return createHttpHandler('getPet', async (event) => {
    const id = v.safeParse(PetIdPathSchema, event.pathParameters?.petId);
    if (!id.success) throw new NotFoundError();
    return ok(await getPet(store, id.output));
  });
}

const config = readConfig({ PETS_TABLE_NAME: RequiredString });

export const handler = createGetPetHandler({ store: new DynamoPetStore(createDocumentClient(), config.PETS_TABLE_NAME) });
