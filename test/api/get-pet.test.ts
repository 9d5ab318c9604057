import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { newPet, type PetBody } from '../helpers/pets';

let api: TestApi;
let pet: PetBody;
let petWithoutStatus: PetBody;

beforeAll(async () => {
  api = await startTestApi();
  pet = (await api.createPet(newPet({ name: 'Fido', categoryId: 4, status: 'pending' }))) as unknown as PetBody;
  petWithoutStatus = (await api.createPet(newPet({ name: 'Ghost', categoryId: 5 }))) as unknown as PetBody;
});
afterAll(() => api?.close());

/** RFC 9745 Deprecation, RFC 8594 Sunset and the successor link, on every response of getPet. */
function expectDeprecationHeaders(response: Response): void {
  expect(response.headers.get('deprecation')).toBe('@1795305600');
  expect(response.headers.get('sunset')).toBe('Thu, 05 Dec 2030 00:00:00 GMT');
  expect(response.headers.get('link')).toBe(`<http://localhost:${api.port}/v1/pets>; rel="successor-version"`);
}

describe('GET /v1/pets/{petId}', () => {
  it('answers 200 with the pet', async () => {
    const response = await api.request(`/pets/${pet.id}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(await response.json()).toEqual({ id: pet.id, name: 'Fido', categoryId: 4, status: 'pending' });
  });

  it('answers 200 with a pet created without a status, the status still absent', async () => {
    const response = await api.request(`/pets/${petWithoutStatus.id}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toStrictEqual({ id: petWithoutStatus.id, name: 'Ghost', categoryId: 5 });
  });

  it.each([
    ['a pet that does not exist', '1234567'],
    ['the largest id no pet has', '9007199254740991'],
    ['abc', 'abc'],
    ['0', '0'],
    ['-1', '-1'],
    ['007 (leading zeros)', '007'],
    ['1.5', '1.5'],
    ['1.0', '1.0'],
    ['1e3', '1e3'],
    ['2^53', '9007199254740992'],
    ['2^53 + 1', '9007199254740993'],
    ['a 30-digit number', '123456789012345678901234567890'],
    ['a space', '%20'],
    ['an encoded slash', '1%2F2'],
  ])('answers 404 not_found for %s', async (_, petId) => {
    await expectError(await api.request(`/pets/${petId}`), 404, 'not_found');
  });

  it('answers 404 for an existing id written with a leading zero', async () => {
    await expectError(await api.request(`/pets/0${pet.id}`), 404, 'not_found');
  });
});

describe('GET /v1/pets/{petId}: deprecation headers on every response', () => {
  it('are on a 200', async () => {
    const response = await api.request(`/pets/${pet.id}`);
    expect(response.status).toBe(200);
    expectDeprecationHeaders(response);
  });

  it.each(['999', 'abc', '0', '9007199254740992'])('are on the 404 for %s', async (petId) => {
    const response = await api.request(`/pets/${petId}`);
    expect(response.status).toBe(404);
    expectDeprecationHeaders(response);
  });

  it('are on the 401 for an anonymous caller', async () => {
    const response = await api.request(`/pets/${pet.id}`, { anonymous: true });
    expect(response.status).toBe(401);
    expectDeprecationHeaders(response);
  });

  it('are on the 401 for an unknown key', async () => {
    const response = await api.request(`/pets/${pet.id}`, { headers: { authorization: 'Bearer not-a-key-of-this-service' } });
    expect(response.status).toBe(401);
    expectDeprecationHeaders(response);
  });

  it('are not on listPets, which is not deprecated', async () => {
    const response = await api.request('/pets');
    expect(response.headers.get('deprecation')).toBeNull();
    expect(response.headers.get('sunset')).toBeNull();
  });
});
