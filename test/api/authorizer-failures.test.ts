import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http';
import { CLOSED_PORT } from '../../local/addresses';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { postPet, storedPets } from '../helpers/pets';

/**
 * The API keys table unreachable from the authorizer: every function's environment points
 * DynamoDB at a closed port, so the authorizer's own key lookup fails.
 */
let api: TestApi;

beforeAll(async () => {
  const unreachable = `http://127.0.0.1:${CLOSED_PORT}`;
  api = await startTestApi({ functionEnvironment: () => ({ AWS_ENDPOINT_URL_DYNAMODB: unreachable }) });
});
afterAll(async () => {
  await api?.close();
});

describe('when the authorizer cannot look a key up', () => {
  it.each([
    ['GET /v1/pets', () => api.request('/pets')],
    ['POST /v1/pets', () => postPet(api, { name: 'Rex', categoryId: 1 })],
    ['GET /v1/pets/1', () => api.request('/pets/1')],
    ['GET /v1/nope', () => api.request('/nope')],
  ])('answers %s with 503 service_unavailable and Retry-After, not 401 or 500', async (_, send) => {
    const response = await send();
    expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    await expectError(response, 503, 'service_unavailable');
  });

  it('stores nothing for a create it refused', async () => {
    await expectError(await postPet(api, { name: 'Rex', categoryId: 1 }), 503, 'service_unavailable');
    expect(await storedPets(api.documents)).toEqual([]);
  });

  it('keeps the deprecation headers on the 503 of getPet', async () => {
    const response = await api.request('/pets/1');
    expect(response.status).toBe(503);
    expect(response.headers.get('deprecation')).toBe('@1795305600');
  });

  it('still answers a caller without any key 401: no lookup is needed to refuse it', async () => {
    const response = await api.request('/pets', { anonymous: true });
    await expectError(response, 401, 'unauthorized');
  });
});
