import { readConfig, RequiredString } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { createHttpHandler } from '../shared/http/handler';
import { apiUrl, parseInput, readJsonObject } from '../shared/http/request';
import { created } from '../shared/http/responses';
import { DynamoPetStore } from '../shared/pets/dynamo-pet-store';
import { NewPetSchema } from '../shared/pets/pet';
import type { PetStore } from '../shared/pets/pet-store';
import { createPet } from '../shared/pets/pets';

export function createCreatePetHandler({ store }: { readonly store: PetStore }) {
  return createHttpHandler('createPet', async (event) => {
    const input = parseInput(NewPetSchema, readJsonObject(event));
    const pet = await createPet(store, input);
    return created(pet, { location: apiUrl(event, `${event.rawPath}/${pet.id}`) });
  });
}

const config = readConfig({ PETS_TABLE_NAME: RequiredString });

export const handler = createCreatePetHandler({ store: new DynamoPetStore(createDocumentClient(), config.PETS_TABLE_NAME) });
