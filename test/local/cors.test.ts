import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS } from '../../shared/http/cors-policy';
import { parseAllowedOrigins } from '../../local/cors';
import { routes } from '../../shared/facts/routes';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { storedPets } from '../helpers/pets';

const ALLOWED = 'http://localhost:5173';
const DISALLOWED = 'https://evil.example';

/** Starts a local API for one describe block: two at once would share this process's environment. */
function useApi(options: Parameters<typeof startTestApi>[0]): () => TestApi {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(options);
  });
  afterAll(async () => {
    await api?.close();
  });
  return () => api;
}

/** What a browser sends before a cross-origin request with an Authorization header or a JSON body. */
function preflight(target: TestApi, origin: string, method = 'POST') {
  return fetch(`${target.baseUrl}/pets`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
  });
}

function corsHeaders(response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => name.startsWith('access-control-')));
}

describe('the local API with a browser origin allowed', () => {
  const current = useApi({ cors: { allowOrigins: [ALLOWED], maxAgeSeconds: 600 } });
  let api: TestApi;
  beforeAll(() => {
    api = current();
  });
  it("answers the browser's preflight itself, without a key, with the policy the deployed API has", async () => {
    const response = await preflight(api, ALLOWED);
    expect(response.status).toBe(204);
    expect(corsHeaders(response)).toEqual({
      'access-control-allow-origin': ALLOWED,
      'access-control-allow-methods': CORS_ALLOW_METHODS.join(','),
      'access-control-allow-headers': CORS_ALLOW_HEADERS.join(','),
      'access-control-max-age': '600',
    });
  });

  it('lets the real request through, and lets the browser read Location and Link', async () => {
    const created = await api.request('/pets', {
      method: 'POST',
      headers: { origin: ALLOWED, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Cross-origin', categoryId: 1 }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe(ALLOWED);
    expect(created.headers.get('access-control-expose-headers')?.split(',')).toEqual([...CORS_EXPOSE_HEADERS]);
    await api.createPet({ name: 'Second', categoryId: 1 });
    const page = await api.request('/pets?limit=1', { headers: { origin: ALLOWED } });
    expect(page.headers.get('link')).toMatch(/rel="next"/);
    expect(page.headers.get('access-control-expose-headers')?.split(',')).toContain('link');
  });

  it('adds the CORS headers to our own errors too, so a browser can read the Error body of a 401', async () => {
    const response = await api.request('/pets', { anonymous: true, headers: { origin: ALLOWED } });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe(ALLOWED);
  });

  it('gives a disallowed origin no CORS headers, on the preflight or the request, so the browser refuses', async () => {
    expect(corsHeaders(await preflight(api, DISALLOWED))).toEqual({});
    const response = await api.request('/pets', { headers: { origin: DISALLOWED } });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual({});
  });

  it('answers an OPTIONS request that is no preflight on the unauthenticated OPTIONS route, as the deployed API does: 204', async () => {
    const response = await fetch(`${api.baseUrl}/pets`, { method: 'OPTIONS' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('refuses a preflight for a method no route serves', async () => {
    const unserved = (['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).find(
      (method) => !routes.some((route) => route.method === method),
    );
    expect(corsHeaders(await preflight(api, ALLOWED, unserved!))).toEqual({});
  });

  it('stores nothing for a preflight, which never reaches a function with a key', async () => {
    const before = await storedPets(api.documents);
    await (await preflight(api, ALLOWED)).arrayBuffer();
    expect(await storedPets(api.documents)).toEqual(before);
  });
});

describe('the local API without CORS, as both stages are configured today', () => {
  const current = useApi({});
  it('sends no CORS headers, and treats a preflight as any anonymous request: 401', async () => {
    const response = await preflight(current(), ALLOWED);
    expect(response.status).toBe(401);
    expect(corsHeaders(response)).toEqual({});
    expect(corsHeaders(await current().request('/pets', { headers: { origin: ALLOWED } }))).toEqual({});
  });
});

describe('CORS_ALLOW_ORIGINS of npm start', () => {
  it('takes a comma-separated list of origins, or *', () => {
    expect(parseAllowedOrigins('CORS_ALLOW_ORIGINS', 'http://localhost:5173, https://app.example.com')).toEqual([
      'http://localhost:5173',
      'https://app.example.com',
    ]);
    expect(parseAllowedOrigins('CORS_ALLOW_ORIGINS', '*')).toEqual(['*']);
    expect(parseAllowedOrigins('CORS_ALLOW_ORIGINS', undefined)).toEqual([]);
  });

  it.each(['localhost:5173', 'http://localhost:5173/', 'http://localhost:5173/app', 'ftp://example.com'])(
    'refuses %s, naming the variable, rather than silently blocking the browser',
    (value) => {
      expect(() => parseAllowedOrigins('CORS_ALLOW_ORIGINS', value)).toThrow(/CORS_ALLOW_ORIGINS/);
    },
  );
});
