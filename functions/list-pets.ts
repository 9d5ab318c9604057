import * as v from 'valibot';
import { readConfig, RequiredString } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { ENV } from '../shared/environment';
import { createHttpHandler } from '../shared/http/handler';
import { ListPetsQuerySchema } from '../shared/http/pet-parameters';
import { apiUrl, parseInput, queryParameters } from '../shared/http/request';
import { ok } from '../shared/http/responses';
import { decodeCursor, encodeCursor } from '../shared/pets/cursor';
import { DynamoPetStore } from '../shared/pets/dynamo-pet-store';
import { LIST_LIMIT } from '../shared/pets/pet-schemas';
import type { PetStore } from '../shared/pets/pet-store';
import { listPets } from '../shared/pets/pet-operations';

export interface ListPetsDependencies {
  readonly store: PetStore;
  /** Signs and verifies pagination cursors. */
  readonly cursorSecret: string;
}

export function createListPetsHandler({ store, cursorSecret }: ListPetsDependencies) {
  return createHttpHandler('listPets', async (event) => {
    const query = parseInput(ListPetsQuerySchema, queryParameters(event));
    const filter = { status: query.status };
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, filter, cursorSecret);
    const limit = query.limit ?? LIST_LIMIT.default;
    const page = await listPets(store, { ...filter, limit, after });
    if (page.next === undefined) return ok(page.pets);

    const next = new URLSearchParams({ limit: String(limit) });
    if (query.status !== undefined) next.set('status', query.status);
    next.set('cursor', encodeCursor(page.next, filter, cursorSecret));
    return ok(page.pets, { link: `<${apiUrl(event, event.rawPath, next)}>; rel="next"` });
  });
}

const config = readConfig({
  [ENV.petsTable]: RequiredString,
  [ENV.cursorSecret]: v.pipe(v.string('is required'), v.minLength(32, 'must be at least 32 characters')),
});

export const handler = createListPetsHandler({
  store: new DynamoPetStore(createDocumentClient(), config[ENV.petsTable]),
  cursorSecret: config[ENV.cursorSecret],
});
