import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PET_STATUSES } from '../../shared/domain/pets/pet-schemas';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { listedIds, newPet, postPet, type PetBody } from '../helpers/pets';

const MAX_ID = 9007199254740991;
const JSON_TYPE = { 'content-type': 'application/json' };

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

/** Sends a request that must be rejected, and checks the listing shows nothing new afterwards. */
async function expectRejectedWithoutStoring(send: () => Promise<Response>): Promise<Response> {
  const before = await listedIds(api);
  const response = await send();
  expect(response.status).toBeGreaterThanOrEqual(400);
  expect(await listedIds(api)).toEqual(before);
  return response;
}

function expectValidId(id: unknown): void {
  expect(typeof id).toBe('number');
  expect(Number.isSafeInteger(id)).toBe(true);
  expect(id as number).toBeGreaterThanOrEqual(1);
  expect(id as number).toBeLessThanOrEqual(MAX_ID);
}

describe('POST /v1/pets: a valid NewPet', () => {
  it('answers 201 with the Pet, its new id and a Location header pointing at it', async () => {
    const response = await postPet(api, { name: 'Rex', categoryId: 7, status: 'available' });
    expect(response.status).toBe(201);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    const pet = (await response.json()) as PetBody;
    expect(Object.keys(pet).sort()).toEqual(['categoryId', 'id', 'name', 'status']);
    expect(pet).toMatchObject({ name: 'Rex', categoryId: 7, status: 'available' });
    expectValidId(pet.id);
    expect(response.headers.get('location')).toBe(`http://localhost:${api.port}/v1/pets/${pet.id}`);

    const fetched = await api.request(new URL(response.headers.get('location')!).pathname.replace(/^\/v1/, ''));
    expect(fetched.status).toBe(200);
    expect(await fetched.json()).toEqual(pet);
  });

  it.each(PET_STATUSES)('accepts status %s', async (status) => {
    const pet = await api.createPet(newPet({ status }));
    expect(pet.status).toBe(status);
  });

  it('leaves an omitted status absent in the response, in later reads and in listings', async () => {
    const response = await postPet(api, { name: 'No availability given', categoryId: 3 });
    expect(response.status).toBe(201);
    const text = await response.text();
    expect(text).not.toContain('status');
    const pet = JSON.parse(text) as PetBody;
    expect(Object.keys(pet).sort()).toEqual(['categoryId', 'id', 'name']);

    const read = await (await api.request(`/pets/${pet.id}`)).text();
    expect(read).not.toContain('status');
    expect(JSON.parse(read)).toEqual(pet);

    const listed = (await (await api.request('/pets?limit=100')).json()) as PetBody[];
    expect(listed.find((candidate) => candidate.id === pet.id)).toEqual(pet);
    expect(Object.keys(listed.find((candidate) => candidate.id === pet.id)!)).not.toContain('status');
  });

  it.each([
    ['one character', 'R'],
    ['200 characters', 'x'.repeat(200)],
    ['200 emoji (400 UTF-16 units)', '🐶'.repeat(200)],
    ['200 CJK characters', '犬'.repeat(200)],
    ['mixed scripts', 'Ünïcødé 🐈 猫'],
  ])('accepts a name of %s and returns it unchanged', async (_, name) => {
    const pet = await api.createPet({ name, categoryId: 1 });
    expect(pet.name).toBe(name);
  });

  it.each([
    ['1', '1', 1],
    ['2^53 − 1', '9007199254740991', MAX_ID],
    ['42', '42', 42],
  ])('accepts categoryId %s exactly', async (_, literal, value) => {
    const response = await postPet(api, `{"name":"Exact","categoryId":${literal}}`);
    expect(response.status).toBe(201);
    const text = await response.text();
    expect(text).toContain(`"categoryId":${literal}`);
    expect((JSON.parse(text) as PetBody).categoryId).toBe(value);
  });

  it.each([['application/json; charset=utf-8'], ['application/json;charset=UTF-8'], ['application/json']])(
    'accepts Content-Type %s',
    async (contentType) => {
      const response = await postPet(api, newPet(), { 'content-type': contentType });
      expect(response.status).toBe(201);
    },
  );

  it('accepts a body of exactly 16384 bytes', async () => {
    const json = JSON.stringify({ name: 'Big', categoryId: 1 });
    const body = `${json.slice(0, -1)}${' '.repeat(16384 - json.length)}}`;
    expect(Buffer.byteLength(body)).toBe(16384);
    expect((await postPet(api, body)).status).toBe(201);
  });
});

describe('POST /v1/pets: ids', () => {
  it('gives 50 concurrent creates 50 distinct ids, all listed', async () => {
    const before = await listedIds(api);
    const responses = await Promise.all(Array.from({ length: 50 }, (_, index) => postPet(api, newPet({ name: `Parallel ${index}` }))));
    expect(responses.map((response) => response.status)).toEqual(Array(50).fill(201));
    const ids = await Promise.all(responses.map(async (response) => ((await response.json()) as PetBody).id));
    ids.forEach(expectValidId);
    expect(new Set(ids).size).toBe(50);
    const after = await listedIds(api);
    expect(after).toHaveLength(before.length + 50);
    expect(new Set(after).size).toBe(after.length);
    for (const id of ids) expect(after).toContain(id);
  });
});

describe('POST /v1/pets: invalid fields are rejected with 400 and nothing is stored', () => {
  it.each([
    ['an empty name', { name: '', categoryId: 1 }, 'name'],
    ['a name of 201 characters', { name: 'x'.repeat(201), categoryId: 1 }, 'name'],
    ['a name of 201 emoji', { name: '🐶'.repeat(201), categoryId: 1 }, 'name'],
    ['a numeric name', { name: 5, categoryId: 1 }, 'name'],
    ['a null name', { name: null, categoryId: 1 }, 'name'],
    ['an array name', { name: ['Rex'], categoryId: 1 }, 'name'],
    ['a missing name', { categoryId: 1 }, 'name'],
    ['a missing categoryId', { name: 'Rex' }, 'categoryId'],
    ['categoryId 0', { name: 'Rex', categoryId: 0 }, 'categoryId'],
    ['categoryId -1', { name: 'Rex', categoryId: -1 }, 'categoryId'],
    ['categoryId 1.5', { name: 'Rex', categoryId: 1.5 }, 'categoryId'],
    ['categoryId "1"', { name: 'Rex', categoryId: '1' }, 'categoryId'],
    ['categoryId null', { name: 'Rex', categoryId: null }, 'categoryId'],
    ['categoryId true', { name: 'Rex', categoryId: true }, 'categoryId'],
    ['status "unknown"', { name: 'Rex', categoryId: 1, status: 'unknown' }, 'status'],
    ['status "AVAILABLE"', { name: 'Rex', categoryId: 1, status: 'AVAILABLE' }, 'status'],
    ['status ""', { name: 'Rex', categoryId: 1, status: '' }, 'status'],
    ['status null', { name: 'Rex', categoryId: 1, status: null }, 'status'],
    ['status 1', { name: 'Rex', categoryId: 1, status: 1 }, 'status'],
  ])('rejects %s with 400 invalid_parameter naming the field', async (_, body, field) => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, body));
    const error = await expectError(response, 400, 'invalid_parameter');
    expect(error.message).toContain(field);
  });

  it.each([
    ['2^53', '9007199254740992'],
    ['2^53 + 1 (rounds to 2^53 as a double)', '9007199254740993'],
    ['1.5', '1.5'],
    ['1e400 (beyond any double)', '1e400'],
    ['0', '0'],
    ['-1', '-1'],
    ['-0', '-0'],
    ['a 30-digit number', '123456789012345678901234567890'],
  ])('rejects the categoryId literal %s instead of rounding it', async (_, literal) => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, `{"name":"Rounded","categoryId":${literal}}`));
    const error = await expectError(response, 400, 'invalid_parameter');
    expect(error.message).toContain('categoryId');
  });

  it.each(['id', 'createdAt', 'foo', 'Name', 'category'])('rejects the unknown field %s with 400 naming it', async (field) => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, { name: 'Rex', categoryId: 1, [field]: 1 }));
    const error = await expectError(response, 400, 'invalid_parameter');
    expect(error.message).toContain(field);
  });

  it('rejects a client-chosen id even when it is a valid id', async () => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, { id: 12345, name: 'Rex', categoryId: 1 }));
    const error = await expectError(response, 400, 'invalid_parameter');
    expect(error.message).toContain('id');
  });
});

describe('POST /v1/pets: a body that is not a JSON object is rejected with 400 invalid_body', () => {
  it.each([
    ['an array', '[{"name":"Rex","categoryId":1}]'],
    ['a string', '"Rex"'],
    ['a number', '1'],
    ['null', 'null'],
    ['true', 'true'],
    ['malformed JSON', '{"name": "Rex", "categoryId": 1'],
    ['JSON with a trailing comma', '{"name":"Rex","categoryId":1,}'],
    ['single-quoted JSON', "{'name':'Rex','categoryId':1}"],
    ['two JSON values', '{"name":"Rex","categoryId":1}{}'],
    ['plain text', 'name=Rex&categoryId=1'],
    ['an empty body', ''],
    ['whitespace only', '   '],
  ])('rejects %s', async (_, body) => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, body));
    await expectError(response, 400, 'invalid_body');
  });

  it('rejects a JSON body that is not valid UTF-8', async () => {
    const body = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","categoryId":1}')]);
    const response = await expectRejectedWithoutStoring(() => api.request('/pets', { method: 'POST', headers: JSON_TYPE, body }));
    await expectError(response, 400, 'invalid_body');
  });

  it('rejects a request without a body', async () => {
    const response = await expectRejectedWithoutStoring(() => api.request('/pets', { method: 'POST', headers: JSON_TYPE }));
    await expectError(response, 400, 'invalid_body');
  });
});

describe('POST /v1/pets: media type and size', () => {
  const validJson = JSON.stringify({ name: 'Rex', categoryId: 1 });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['text/plain;charset=UTF-8', { 'content-type': 'text/plain;charset=UTF-8' }],
    ['application/x-www-form-urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['multipart/form-data', { 'content-type': 'multipart/form-data; boundary=x' }],
    ['application/xml', { 'content-type': 'application/xml' }],
    ['application/json with charset latin1', { 'content-type': 'application/json; charset=iso-8859-1' }],
  ])('rejects Content-Type %s with 415 unsupported_media_type', async (_, headers) => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, validJson, headers));
    await expectError(response, 415, 'unsupported_media_type');
  });

  it('rejects a JSON body sent without a Content-Type with 415 unsupported_media_type', async () => {
    const response = await expectRejectedWithoutStoring(() => postPet(api, new TextEncoder().encode(validJson), {}));
    await expectError(response, 415, 'unsupported_media_type');
  });

  it.each([
    ['16385 bytes', 16385],
    ['64 KiB', 64 * 1024],
    ['1 MiB', 1024 * 1024],
  ])('rejects a body of %s with 413 payload_too_large', async (_, size) => {
    const body = `${validJson.slice(0, -1)}${' '.repeat(size - validJson.length)}}`;
    expect(Buffer.byteLength(body)).toBe(size);
    const response = await expectRejectedWithoutStoring(() => postPet(api, body));
    await expectError(response, 413, 'payload_too_large');
  });

  it('counts bytes, not characters: 16385 bytes of emoji are too large', async () => {
    const name = '🐶'.repeat(4096); // 16384 bytes of UTF-8 on their own
    const response = await expectRejectedWithoutStoring(() => postPet(api, { name, categoryId: 1 }));
    await expectError(response, 413, 'payload_too_large');
  });
});
