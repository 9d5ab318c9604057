import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH } from '../../shared/http/json-body';
import { routes, type Route } from '../../shared/facts/routes';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { postPet, storedPets } from '../helpers/pets';

/** Inputs whose answer used to be accidental: each now gets a deliberate one, and nothing is stored. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

async function expectNothingStored(send: () => Promise<Response>): Promise<Response> {
  const before = await storedPets(api.documents);
  const response = await send();
  expect(await storedPets(api.documents)).toEqual(before);
  return response;
}

describe('JSON bodies are I-JSON', () => {
  it('refuses a repeated member with 400 naming it, so no validator in front can approve another document', async () => {
    const response = await expectNothingStored(() => postPet(api, '{"name":"Approved","categoryId":1,"name":"Stored"}'));
    expect((await expectError(response, 400, 'invalid_body')).message).toContain('"name"');
  });

  it('refuses a name with an unpaired surrogate, which strict clients could not read back', async () => {
    const response = await expectNothingStored(() => postPet(api, '{"name":"\\ud800","categoryId":1}'));
    expect((await expectError(response, 400, 'invalid_body')).message).toMatch(/unpaired UTF-16 surrogate/);
  });

  it('stores a name with a proper surrogate pair', async () => {
    const response = await postPet(api, '{"name":"\\ud83d\\udc36","categoryId":1}');
    expect(response.status).toBe(201);
    expect(((await response.json()) as { name: string }).name).toBe('🐶');
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels, saying so rather than "not valid JSON"`, async () => {
    const body = `{"name":"Deep","categoryId":1,"x":${'['.repeat(5_000)}${']'.repeat(5_000)}}`;
    const response = await expectNothingStored(() => postPet(api, body));
    expect((await expectError(response, 400, 'invalid_body')).message).toBe(`The request body nests deeper than ${MAX_JSON_DEPTH} levels.`);
  });

  it.each([
    ['1.0', 1],
    ['1e3', 1000],
  ])('reads categoryId %s as the integer it is, as JSON Schema and Python clients write it', async (literal, value) => {
    const response = await postPet(api, `{"name":"Float-written","categoryId":${literal}}`);
    expect(response.status).toBe(201);
    expect(((await response.json()) as { categoryId: number }).categoryId).toBe(value);
  });
});

describe('Content-Encoding', () => {
  it('refuses a gzip body with 415, saying to send it uncompressed, instead of "not valid UTF-8"', async () => {
    const body = gzipSync(JSON.stringify({ name: 'Zipped', categoryId: 1 }));
    const response = await expectNothingStored(() =>
      api.request('/pets', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body }),
    );
    expect((await expectError(response, 415, 'unsupported_media_type')).message).toContain('uncompressed');
  });

  it('refuses a plain body labelled br rather than storing it', async () => {
    const response = await expectNothingStored(() =>
      api.request('/pets', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
        body: JSON.stringify({ name: 'Labelled', categoryId: 1 }),
      }),
    );
    await expectError(response, 415, 'unsupported_media_type');
  });
});

describe('query parameters: one rule for every operation, from the route table', () => {
  const sample: Record<string, string> = { '{petId}': '1' };
  const pathOf = (path: string) => path.replace(/\{petId\}/, sample['{petId}']!);

  it.each(
    (routes as readonly Route[]).filter((route) => !route.reads.includes('query')).map((route) => [route.operationId, route] as const),
  )('%s, which takes none, refuses one with 400 naming it, and stores nothing', async (_, route) => {
    const response = await expectNothingStored(() =>
      api.request(`${pathOf(route.path)}?status=sold`, {
        method: route.method,
        ...(route.method === 'POST'
          ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Unsold', categoryId: 1 }) }
          : {}),
      }),
    );
    expect((await expectError(response, 400, 'invalid_parameter')).message).toBe('status is not a query parameter of this operation.');
  });

  it('listPets, which takes some, refuses another the same way', async () => {
    const response = await api.request('/pets?stauts=sold');
    expect((await expectError(response, 400, 'invalid_parameter')).message).toBe('stauts is not a query parameter of this operation.');
  });
});

describe('integers in the URL are canonical decimal', () => {
  it.each(['01', '007', '+5', '5.0'])('listPets refuses limit=%s, as getPet finds no pet at /pets/007', async (limit) => {
    await expectError(await api.request(`/pets?limit=${encodeURIComponent(limit)}`), 400, 'invalid_parameter');
  });

  it('listPets still takes limit=5', async () => {
    expect((await api.request('/pets?limit=5')).status).toBe(200);
  });
});
