import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchDocumented } from '../helpers/contract';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { pathNaming, routes, type HttpMethod } from '../../shared/facts/routes';

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

/** Every method a route may have (shared/facts/routes.ts, HttpMethod). */
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The methods the route table serves at a path template, in its order: what `Allow` must list there. */
function servedAt(template: string): HttpMethod[] {
  return routes.filter((route) => route.path === template).map((route) => route.method);
}

/** Each known path, with each path parameter a pet id and, as a client may send, not one; and each method it does not serve. */
const WRONG_METHODS = [...new Set(routes.map((route) => route.path))].flatMap((template) =>
  [...new Set(['1', 'abc'].map((value) => pathNaming({ path: template }, value).rawPath))].flatMap((path) =>
    METHODS.filter((method) => !servedAt(template).includes(method)).map((method) => [method, path, servedAt(template).join(', ')]),
  ),
);

describe('wrong methods on known paths', () => {
  it('are tried on every path of the route table', () => {
    expect(new Set(WRONG_METHODS.map(([, path]) => path)).size).toBeGreaterThanOrEqual(new Set(routes.map((route) => route.path)).size);
  });

  it.each(WRONG_METHODS)('answers %s %s with 405 method_not_allowed and Allow: %s', async (method, path, allow) => {
    const response = await fromRoot(path!, { method });
    expect(response.headers.get('allow')).toBe(allow);
    await expectError(response, 405, 'method_not_allowed');
  });

  it('answers 405 even when the wrong method carries a body', async () => {
    const [method, path, allow] = WRONG_METHODS.find(([wrong]) => wrong === 'POST' || wrong === 'PUT')!;
    const response = await fromRoot(path!, {
      method,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
    });
    expect(response.headers.get('allow')).toBe(allow);
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
