import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snapshotEnv } from '../helpers/env';
import { closedPort, expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { postPet } from '../helpers/pets';

/**
 * The pets table failing behind a working authorizer. Each function reads its environment at its
 * cold start (its first request), so the authorizer is started first, with the real dynalite; then
 * the environment changes before each route's function is first invoked.
 */
let api: TestApi;
let restoreEnv: () => void;

beforeAll(async () => {
  restoreEnv = snapshotEnv();
  api = await startTestApi();
  // Cold-starts the authorizer (and caches the dev key's verdict) while DynamoDB is reachable.
  expect((await api.request('/nope')).status).toBe(404);
});
afterAll(async () => {
  await api?.close();
  restoreEnv?.();
});

function expectRetryAfter(response: Response): void {
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
}

describe('when DynamoDB is unreachable', () => {
  beforeAll(async () => {
    process.env.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${await closedPort()}`;
  });
  afterAll(() => {
    process.env.AWS_ENDPOINT_URL_DYNAMODB = api.dynamoDbEndpoint;
  });

  it('answers an authenticated listing with 503 service_unavailable and Retry-After', async () => {
    const response = await api.request('/pets');
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
  });

  it('answers an authenticated create with 503 service_unavailable and Retry-After', async () => {
    const response = await postPet(api, { name: 'Rex', categoryId: 1 });
    expectRetryAfter(response);
    await expectError(response, 503, 'service_unavailable');
  });

  it('still answers a bad request with 400: validation needs no table', async () => {
    await expectError(await api.request('/pets?limit=0'), 400, 'invalid_parameter');
    await expectError(await postPet(api, '{'), 400, 'invalid_body');
  });
});

describe('when the pets table does not exist', () => {
  beforeAll(() => {
    process.env.PETS_TABLE_NAME = 'animal-store-local-missing-table';
  });
  afterAll(() => {
    process.env.PETS_TABLE_NAME = 'animal-store-local-pets';
  });

  it('answers 500 internal_error without naming the SDK error or the table', async () => {
    const response = await api.request('/pets/1');
    const error = await expectError(response, 500, 'internal_error');
    expect(error.message).not.toMatch(/ResourceNotFound|missing-table|animal-store-local|Requested resource not found/);
  });
});
