import * as v from 'valibot';
import { readConfig, RequiredString } from '../shared/config';
import { createDocumentClient } from '../shared/dynamodb';
import { createHttpHandler } from '../shared/http/handler';
import { apiUrl, parseInput, queryParameters } from '../shared/http/request';
import { ok } from '../shared/http/responses';
import { decodeCursor, encodeCursor } from '../shared/pets/cursor';
import { DynamoPetStore } from '../shared/pets/dynamo-pet-store';
import { LIST_LIMIT, PetStatusSchema } from '../shared/pets/pet';
import type { PetStore } from '../shared/pets/pet-store';
import { listPets } from '../shared/pets/pets';
import { objectIssueMessage } from '../shared/validation';

const limitMessage = `must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}`;

export const ListPetsQuerySchema = v.strictObject(
  {
    limit: v.optional(
      v.pipe(
        v.string(limitMessage),
        v.regex(/^\d{1,3}$/, limitMessage),
        v.transform(Number),
        v.minValue(LIST_LIMIT.min, limitMessage),
        v.maxValue(LIST_LIMIT.max, limitMessage),
      ),
      String(LIST_LIMIT.default),
    ),
    status: v.optional(PetStatusSchema),
    // Any string: decodeCursor bounds its length and answers invalid_cursor for anything it did not issue.
    cursor: v.optional(v.string()),
  },
  objectIssueMessage('is not a query parameter of this operation'),
);

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

const config = readConfig({
  PETS_TABLE_NAME: RequiredString,
  CURSOR_SECRET: v.pipe(v.string('is required'), v.minLength(32, 'must be at least 32 characters')),
});

export const handler = createListPetsHandler({
  store: new DynamoPetStore(createDocumentClient(), config.PETS_TABLE_NAME),
  cursorSecret: config.CURSOR_SECRET,
});
