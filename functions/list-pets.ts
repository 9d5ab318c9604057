import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { createDocumentClient } from '../shared/dynamodb/dynamodb-client';
import { ENV } from '../shared/facts/environment';
import { createHttpHandler } from '../shared/http/handler';
import { ListPetsQuerySchema } from '../shared/http/pet-parameters';
import { apiUrl, parseInput, queryParameters } from '../shared/http/request';
import { ok } from '../shared/http/responses';
import { decodeCursor, encodeCursor } from '../shared/domain/pets/cursor';
import { DynamoPetStore } from '../shared/dynamodb/dynamo-pet-store';
import type { PetStore } from '../shared/domain/pets/pet-store';
import { listPets } from '../shared/domain/pets/pet-operations';

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
    const page = await listPets(store, { ...filter, limit: query.limit, after });
    if (page.next === undefined) return ok(page.pets);

    const next = new URLSearchParams({ limit: String(query.limit) });
    if (query.status !== undefined) next.set('status', query.status);
    next.set('cursor', encodeCursor(page.next, filter, cursorSecret));
    return ok(page.pets, { link: `<${apiUrl(event, event.rawPath, next)}>; rel="next"` });
  });
}

const config = readConfig(FUNCTION_CONFIG.listPets);

export const handler = createListPetsHandler({
  store: new DynamoPetStore(createDocumentClient(), config[ENV.petsTable], config[ENV.listingShards]),
  cursorSecret: config[ENV.cursorSecret],
});
