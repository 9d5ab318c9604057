import createClient from 'openapi-fetch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../../helpers/local-api';
import type { paths } from '../../../shared/client/api-types';

// A client developer's view: types generated from openapi.json (npm run openapi), openapi-fetch,
// nothing from this codebase. If the document and the service disagree, this stops compiling or passing.
let api: TestApi;
let client: ReturnType<typeof createClient<paths>>;
beforeAll(async () => {
  api = await startTestApi();
  client = createClient<paths>({ baseUrl: api.baseUrl, headers: { Authorization: `Bearer ${api.apiKey}` } });
});
afterAll(() => api?.close());

describe('a client generated from openapi.json', () => {
  // Read back through the listing, not getPet: getPet is deprecated, and this test outlives it.
  it('adds a pet and finds it in the listing, fully typed', async () => {
    const created = await client.POST('/pets', { body: { name: 'Rex', categoryId: 1, status: 'available' } });
    expect(created.response.status).toBe(201);
    const pet = created.data!;
    expect(pet).toMatchObject({ name: 'Rex', categoryId: 1, status: 'available' });

    const listed = await client.GET('/pets', { params: { query: { status: 'available', limit: 100 } } });
    expect(listed.data).toContainEqual(pet);
  });

  it('lists pets with typed query parameters and follows the next link', async () => {
    await client.POST('/pets', { body: { name: 'Tom', categoryId: 2, status: 'available' } });
    const first = await client.GET('/pets', { params: { query: { limit: 1, status: 'available' } } });
    expect(first.data).toHaveLength(1);
    const next = /<([^>]+)>; rel="next"/.exec(first.response.headers.get('link') ?? '')?.[1];
    expect(next).toBeDefined();
    const cursor = new URL(next!).searchParams.get('cursor')!;
    const second = await client.GET('/pets', { params: { query: { limit: 1, status: 'available', cursor } } });
    expect(second.data).toHaveLength(1);
    expect(second.data![0]!.id).not.toBe(first.data![0]!.id);
  });

  it("receives errors typed as the Error schema or API Gateway's own body, told apart by `code`", async () => {
    const result = await client.GET('/pets', { params: { query: { limit: 101 } } });
    expect(result.response.status).toBe(400);
    const error = result.error!;
    // A 429 from API Gateway's throttle is `{ message }` only: the generated type makes the client check.
    if (!('code' in error)) throw new Error(`expected our Error body, got ${JSON.stringify(error)}`);
    expect(error.code).toBe('invalid_parameter');
    expect(error.status).toBe(400);
  });
});
