import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';

describe('the local API', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
  });
  afterAll(() => api?.close());

  it('creates a pet and lists it', async () => {
    const pet = await api.createPet({ name: 'Rex', categoryId: 1 });
    const response = await api.request('/pets');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([pet]);
  });
});
