import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ROUTE_FUNCTIONS, type RouteFunctionName } from '../../shared/facts/function-names';
import { preflightRoute } from '../../shared/facts/routes';
import type { HttpHandler } from '../../shared/http/handler';
import { StoreUnavailableError } from '../../shared/domain/store-errors';
import { httpEvent, lambdaContext } from '../../tools/lambda/events';
import { InMemoryIdempotencyStore, InMemoryPetStore } from '../helpers/in-memory-stores';
import { routeHandlers } from '../helpers/route-handlers';

// Handlers validate their configuration when their module loads, as on a Lambda cold start.
vi.hoisted(() => {
  process.env.PETS_TABLE_NAME = 'unit-test-pets';
  process.env.IDEMPOTENCY_TABLE_NAME = 'unit-test-idempotency';
  process.env.CURSOR_SECRET = 'unit-test-cursor-secret-of-32-characters';
  process.env.PETS_LISTING_SHARDS = '8';
  process.env.PETS_WRITE_SHARDS = '8';
});
const { createListPetsHandler } = await import('../../functions/list-pets');
const { createCreatePetHandler } = await import('../../functions/create-pet');
const { createGetPetHandler } = await import('../../functions/get-pet');
const { handler: routeNotFound } = await import('../../functions/route-not-found');

let store: InMemoryPetStore;
beforeEach(() => {
  store = new InMemoryPetStore();
});

const body = (response: { body?: string }) => JSON.parse(response.body ?? 'null') as unknown;

describe('createPet', () => {
  const createPet = () => createCreatePetHandler({ store, idempotency: new InMemoryIdempotencyStore() });
  const post = (json: unknown) =>
    httpEvent({ method: 'POST', body: JSON.stringify(json), headers: { 'content-type': 'application/json' } });

  it('stores the pet and answers 201 with it and its location', async () => {
    const response = await createPet()(post({ name: 'Rex', categoryId: 3, status: 'pending' }), lambdaContext());
    expect(response.statusCode).toBe(201);
    const pet = body(response) as { id: number };
    expect(pet).toEqual({ id: expect.any(Number), name: 'Rex', categoryId: 3, status: 'pending' });
    expect(response.headers.location).toBe(`https://abc123.execute-api.eu-west-1.amazonaws.com/v1/pets/${pet.id}`);
    expect(store.pets.get(pet.id)).toMatchObject({ name: 'Rex' });
  });

  it('leaves status absent when the client omits it', async () => {
    const response = await createPet()(post({ name: 'Rex', categoryId: 3 }), lambdaContext());
    expect(body(response)).not.toHaveProperty('status');
  });

  it('rejects an unknown field, naming it, and stores nothing', async () => {
    const response = await createPet()(post({ name: 'Rex', categoryId: 3, id: 7 }), lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(body(response)).toEqual({ code: 'invalid_parameter', message: 'id is not an accepted field.', status: 400 });
    expect(store.pets.size).toBe(0);
  });

  it('answers a repeat with the same Idempotency-Key with the first pet, marked as a replay, storing one pet', async () => {
    const handler = createPet();
    const keyed = () =>
      httpEvent({
        method: 'POST',
        body: JSON.stringify({ name: 'Rex', categoryId: 3 }),
        headers: { 'content-type': 'application/json', 'idempotency-key': 'order-42' },
      });
    const first = await handler(keyed(), lambdaContext());
    const again = await handler(keyed(), lambdaContext());
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(body(again)).toEqual(body(first));
    expect(store.pets.size).toBe(1);
  });

  it('rejects an Idempotency-Key that is not 1 to 255 printable ASCII characters, storing nothing', async () => {
    const response = await createPet()(
      httpEvent({
        method: 'POST',
        body: JSON.stringify({ name: 'Rex', categoryId: 3 }),
        headers: { 'content-type': 'application/json', 'idempotency-key': 'x'.repeat(256) },
      }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(400);
    expect(body(response)).toMatchObject({ code: 'invalid_parameter', message: expect.stringContaining('Idempotency-Key') });
    expect(store.pets.size).toBe(0);
  });

  it('answers 503 with Retry-After when the store is throttling', async () => {
    store.failWith = new StoreUnavailableError(new Error('ProvisionedThroughputExceededException'));
    const response = await createPet()(post({ name: 'Rex', categoryId: 3 }), lambdaContext());
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(body(response)).toMatchObject({ code: 'service_unavailable', status: 503 });
  });

  it('answers 500 without internals when something unexpected fails', async () => {
    store.failWith = new Error('ResourceNotFoundException: table unit-test-pets not found');
    const response = await createPet()(post({ name: 'Rex', categoryId: 3 }), lambdaContext());
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toMatch(/ResourceNotFound|unit-test-pets|at /);
    expect(body(response)).toEqual({ code: 'internal_error', message: expect.any(String), status: 500 });
  });
});

describe('listPets', () => {
  const listPets = () => createListPetsHandler({ store, cursorSecret: process.env.CURSOR_SECRET! });

  async function seed(count: number) {
    for (let index = 1; index <= count; index++) {
      await store.insert(
        { id: index, name: `pet ${index}`, categoryId: 1, createdAt: new Date(Date.UTC(2026, 0, index)).toISOString() },
        `token ${index}`,
      );
    }
  }

  it('returns a bare array, newest first, 20 by default', async () => {
    await seed(25);
    const response = await listPets()(httpEvent(), lambdaContext());
    const pets = body(response) as Array<{ id: number }>;
    expect(pets).toHaveLength(20);
    expect(pets[0]?.id).toBe(25);
  });

  it('links to the next page with the same filter and limit', async () => {
    await seed(3);
    const response = await listPets()(httpEvent({ query: { limit: '2' } }), lambdaContext());
    expect(response.headers.link).toMatch(
      /^<https:\/\/abc123\.execute-api\.eu-west-1\.amazonaws\.com\/v1\/pets\?limit=2&cursor=[\w.-]+>; rel="next"$/,
    );
  });

  it('gives no next link on the last page', async () => {
    await seed(2);
    const response = await listPets()(httpEvent({ query: { limit: '2' } }), lambdaContext());
    expect(response.headers).not.toHaveProperty('link');
  });

  it.each(['0', '101', '-1', 'abc', '1.5', '', '5,6'])('rejects limit=%j with 400', async (limit) => {
    const response = await listPets()(httpEvent({ query: { limit } }), lambdaContext());
    expect(response.statusCode).toBe(400);
    expect(body(response)).toMatchObject({ code: 'invalid_parameter' });
  });
});

describe('getPet', () => {
  const getPet = () => createGetPetHandler({ store });
  const get = (petId: string) => httpEvent({ rawPath: `/v1/pets/${petId}`, routeKey: 'GET /v1/pets/{petId}', pathParameters: { petId } });

  it('returns the pet with deprecation headers', async () => {
    await store.insert({ id: 9, name: 'Rex', categoryId: 1, createdAt: '2026-01-01T00:00:00.000Z' }, 'token');
    const response = await getPet()(get('9'), lambdaContext());
    expect(body(response)).toEqual({ id: 9, name: 'Rex', categoryId: 1 });
    expect(response.headers).toMatchObject({
      deprecation: '@1795305600',
      sunset: 'Thu, 05 Dec 2030 00:00:00 GMT',
      link: '<https://abc123.execute-api.eu-west-1.amazonaws.com/v1/pets>; rel="successor-version"',
    });
  });

  it.each(['404', 'abc', '0', '007', '9007199254740992'])('answers 404 for the id %s', async (petId) => {
    const response = await getPet()(get(petId), lambdaContext());
    expect(response.statusCode).toBe(404);
    expect(response.headers.deprecation).toBe('@1795305600');
  });
});

/** The functions that answer HTTP requests: every API function but the authorizer. */

describe('every route', () => {
  /** Each route function's handler over the in-memory stores, built as its entry point exports it. */
  let handlers: Record<RouteFunctionName, () => HttpHandler>;
  beforeEach(async () => {
    const built = await routeHandlers({ store, idempotency: new InMemoryIdempotencyStore(), cursorSecret: process.env.CURSOR_SECRET! });
    handlers = Object.fromEntries(Object.entries(built).map(([name, handler]) => [name, () => handler])) as typeof handlers;
  });

  it.each(ROUTE_FUNCTIONS)('%s answers 401 before anything else when the authorizer found no key', async (name) => {
    const response = await handlers[name]()(
      httpEvent({ method: 'DELETE', body: 'not json', authorizer: { outcome: 'missing' } }),
      lambdaContext(),
    );
    expect(response.statusCode).toBe(401);
    expect(response.headers['www-authenticate']).toBe('Bearer realm="animal-store"');
  });

  it.each(ROUTE_FUNCTIONS)('%s fails closed when deployed without the authorizer', async (name) => {
    const response = await handlers[name]()(httpEvent({ authorizer: undefined }), lambdaContext());
    expect(response.statusCode).toBe(401);
  });

  it.each(ROUTE_FUNCTIONS)('%s answers 503 when the authorizer could not reach the key store', async (name) => {
    const response = await handlers[name]()(httpEvent({ authorizer: { outcome: 'unavailable' } }), lambdaContext());
    expect(response.statusCode).toBe(503);
  });
});

describe('the routeNotFound function', () => {
  it('answers 405 with Allow on a known path', async () => {
    const response = await routeNotFound(httpEvent({ method: 'DELETE', routeKey: '$default' }), lambdaContext());
    expect(response.statusCode).toBe(405);
    expect(response.headers.allow).toBe('GET, POST');
  });

  it('answers 404 on an unknown path', async () => {
    const response = await routeNotFound(httpEvent({ rawPath: '/v1/owners', routeKey: '$default' }), lambdaContext());
    expect(response.statusCode).toBe(404);
    expect(body(response)).toMatchObject({ code: 'not_found', status: 404 });
  });

  it('answers a request on the unauthenticated preflight route 204 with no body, leaving the CORS headers to API Gateway', async () => {
    const preflight = httpEvent({
      method: 'OPTIONS',
      routeKey: preflightRoute.routeKey,
      headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'POST' },
      authorizer: undefined,
    });
    const response = await routeNotFound(preflight, lambdaContext());
    expect(response).toEqual({ statusCode: 204, headers: {} });
  });

  it('still refuses an anonymous OPTIONS request that reached it by the $default route', async () => {
    const response = await routeNotFound(httpEvent({ method: 'OPTIONS', routeKey: '$default', authorizer: undefined }), lambdaContext());
    expect(response.statusCode).toBe(401);
  });
});
