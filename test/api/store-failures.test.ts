import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENV } from '../../shared/facts/environment';
import { expectError, expectRetryAfter } from '../helpers/http';
import { routeFunctionsOnly, startTestApi, storeOutage, type TestApi } from '../helpers/local-api';
import { idempotencyRecords, postPet, postPetWithKey, storedPets } from '../helpers/pets';

/**
 * The pets table failing behind a working authorizer: the route functions' environment points
 * DynamoDB at a closed port, or names a table that does not exist; the authorizer's is the stage's.
 */

describe('when DynamoDB is unreachable', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({
      functionEnvironment: storeOutage(),
    });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers an authenticated listing with 503 service_unavailable and Retry-After', async () => {
    const response = await api.request('/pets');
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
  });

  it('answers an authenticated create with 503 service_unavailable and Retry-After, and stores nothing', async () => {
    const response = await postPet(api, { name: 'Rex', categoryId: 1 });
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
    const keyed = await postPetWithKey(api, { name: 'Rex', categoryId: 1 }, 'unreachable-1');
    expectRetryAfter(keyed);
    await expectError(keyed, 503, 'service_unavailable');
    expect(await storedPets(api.documents)).toEqual([]);
    expect(await idempotencyRecords(api.documents)).toEqual([]);
  });

  it('still answers a bad request with 400: validation needs no table', async () => {
    await expectError(await api.request('/pets?limit=0'), 400, 'invalid_parameter');
    await expectError(await postPet(api, '{'), 400, 'invalid_body');
  });
});

describe('when the pets table does not exist', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({ functionEnvironment: routeFunctionsOnly({ [ENV.petsTable]: 'animal-store-local-missing-table' }) });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('answers 500 internal_error without naming the SDK error or the table', async () => {
    const response = await api.request('/pets/1');
    const error = await expectError(response, 500, 'internal_error');
    expect(error.message).not.toMatch(/ResourceNotFound|missing-table|animal-store-local|Requested resource not found/);
  });
});
