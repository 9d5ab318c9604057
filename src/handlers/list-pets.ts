import { readConfig } from '../runtime/config';
import { FUNCTION_CONFIG } from '../runtime/function-config';
import { createDocumentClient } from '../dynamodb/dynamodb-client';
import { ENV } from '../facts/environment';
import { createHttpHandler } from '../http/handler';
import { ListPetsQuerySchema } from '../http/pet-parameters';
import { apiUrl, parseInput, queryParameters } from '../http/request';
import { ok } from '../http/responses';
import { decodeCursor, encodeCursor } from '../domain/pets/cursor';
import { DynamoPetStore } from '../dynamodb/dynamo-pet-store';
import { LIST_LIMIT } from '../domain/pets/pet-schemas';
import type { PetStore } from '../domain/pets/pet-store';
import { listPets } from '../domain/pets/pet-operations';
import { cacheListHead } from '../domain/pets/list-head-cache';

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

const config = readConfig(FUNCTION_CONFIG['list-pets']);

const listing = { shards: config[ENV.listingShards], statusIndex: config[ENV.statusListingIndex] };

export const handler = createListPetsHandler({
  store: cacheListHead(new DynamoPetStore(createDocumentClient(), config[ENV.petsTable], listing), {
    maxAgeMs: config[ENV.listHeadCacheMs],
  }),
  cursorSecret: config[ENV.cursorSecret],
});
