import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchDocumented } from '../helpers/contract';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

/** A request to a path from the server root (not under /v1), with the dev key. */
function fromRoot(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${api.apiKey}`);
  return fetchDocumented(`http://localhost:${api.port}${path}`, { ...init, headers });
}

describe('unmatched routes', () => {
  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/'],
    ['GET', '/pets'],
    ['GET', '/v1'],
    ['GET', '/v1/'],
    ['GET', '/v2/pets'],
    ['GET', '/V1/pets'],
    ['GET', '/v1/Pets'],
    ['GET', '/v1/pets/1/extra'],
    ['GET', '/v1/pets/'],
    ['GET', '/v1/pets/1/'],
    ['POST', '/v1/pets/'],
    ['GET', '/v1/store/orders'],
    ['DELETE', '/v1/nope'],
  ])('answers %s %s with 404 not_found', async (method, path) => {
    await expectError(await fromRoot(path, { method }), 404, 'not_found');
  });
});

describe('wrong methods on known paths', () => {
  it.each([
    ['DELETE', '/v1/pets', 'GET, POST'],
    ['PUT', '/v1/pets', 'GET, POST'],
    ['PATCH', '/v1/pets', 'GET, POST'],
    ['POST', '/v1/pets/1', 'GET'],
    ['PUT', '/v1/pets/1', 'GET'],
    ['PATCH', '/v1/pets/1', 'GET'],
    ['DELETE', '/v1/pets/1', 'GET'],
    ['DELETE', '/v1/pets/abc', 'GET'],
  ])('answers %s %s with 405 method_not_allowed and Allow: %s', async (method, path, allow) => {
    const response = await fromRoot(path, { method });
    expect(response.headers.get('allow')).toBe(allow);
    await expectError(response, 405, 'method_not_allowed');
  });

  it('answers 405 even when the wrong method carries a body', async () => {
    const response = await fromRoot('/v1/pets/1', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(response.headers.get('allow')).toBe('GET');
    await expectError(response, 405, 'method_not_allowed');
  });
});

describe('the Error body', () => {
  it.each([
    ['a 400', () => api.request('/pets?limit=0'), 400],
    ['a 401', () => api.request('/pets', { anonymous: true }), 401],
    ['a 404', () => api.request('/pets/0'), 404],
    ['a 405', () => api.request('/pets', { method: 'DELETE' }), 405],
    [
      'a 413',
      () => api.request('/pets', { method: 'POST', headers: { 'content-type': 'application/json' }, body: ' '.repeat(20_000) }),
      413,
    ],
    ['a 415', () => api.request('/pets', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }), 415],
  ])('of %s has exactly code, message and status, status repeating the HTTP status', async (_, send, status) => {
    const response = await send();
    expect(response.status).toBe(status);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    const body = (await response.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
    expect(body.status).toBe(status);
    expect(typeof body.code).toBe('string');
    expect(typeof body.message).toBe('string');
  });
});
