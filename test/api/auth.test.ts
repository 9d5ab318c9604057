import * as v from 'valibot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, generateKeyId, hashApiKey } from '../../shared/domain/auth/api-keys';
import { createAuthenticator, KEY_CACHE_TTL_MS } from '../../shared/domain/auth/authenticate';
import type { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { issueApiKey, revokeKeysNamed } from '../../shared/domain/auth/manage-api-keys';
import { schemasOf } from '../../shared/catalog/function-catalog';
import {
  allowedMethods,
  BASE_PATH,
  pathParameterNames,
  routeKey,
  routes,
  type HttpMethod,
  type RequestPart,
  type Route,
} from '../../shared/facts/routes';
import { DEV_KEY_NAME } from '../../local/local-api';
import { fetchDocumented } from '../helpers/contract';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { apiKeyStore, idempotencyRecords, storedPets } from '../helpers/pets';

const DEV_KEY = 'my-dev-key-0123456789';
const CHALLENGE = 'Bearer realm="animal-store"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="animal-store", error="invalid_token"';

let api: TestApi;
let keys: DynamoApiKeyStore;
let revokedKey: string;
let expiredKey: string;

beforeAll(async () => {
  api = await startTestApi({ devApiKey: DEV_KEY });
  keys = apiKeyStore(api.documents);
  const revoked = await issueApiKey(keys, 'revoked before first use');
  await keys.revoke(revoked.record.keyId, new Date());
  revokedKey = revoked.apiKey;
  // As the pre-traffic hook issues a check key, expired since and never revoked.
  expiredKey = generateApiKey();
  const createdAt = new Date(Date.now() - 60_000);
  await keys.add({
    keyId: generateKeyId(),
    keyHash: hashApiKey(expiredKey),
    name: 'expired before first use',
    createdAt: createdAt.toISOString(),
    expiresAt: new Date(createdAt.getTime() + 30_000).toISOString(),
  });
});
afterAll(async () => {
  await api?.close();
});

interface Credential {
  readonly label: string;
  /** The Authorization header; undefined sends none. */
  readonly header: () => string | undefined;
  /** The WWW-Authenticate challenge expected with the 401. */
  readonly challenge: string;
}

/** No bearer token reaches the service: RFC 6750 §3.1, no error code. */
const WITHOUT_TOKEN: Credential[] = [
  { label: 'no Authorization header', header: () => undefined, challenge: CHALLENGE },
  { label: 'an empty Authorization header', header: () => '', challenge: CHALLENGE },
  { label: 'Basic credentials', header: () => 'Basic dXNlcjpwYXNz', challenge: CHALLENGE },
  { label: '"Bearer" without a token', header: () => 'Bearer', challenge: CHALLENGE },
];

/** A token was sent, and it is not a valid key. */
const WITH_BAD_TOKEN: Credential[] = [
  {
    label: 'a token with a space in it',
    header: () => `Bearer ${DEV_KEY.slice(0, 8)} ${DEV_KEY.slice(8)}`,
    challenge: INVALID_TOKEN_CHALLENGE,
  },
  { label: 'a token with illegal characters', header: () => 'Bearer abc$def"ghi', challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'an unknown key', header: () => 'Bearer pets_thisKeyWasNeverIssuedByTheService0123456789', challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'the dev key with a character added', header: () => `Bearer ${DEV_KEY}x`, challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'a revoked key', header: () => `Bearer ${revokedKey}`, challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'an expired key', header: () => `Bearer ${expiredKey}`, challenge: INVALID_TOKEN_CHALLENGE },
];

const pet = JSON.stringify({ name: 'Rex', categoryId: 1 });
const jsonType = { 'content-type': 'application/json' };

/**
 * A value each path parameter accepts and a body each operation with one accepts, so that a probe
 * reaches a route exactly as a legitimate call would: if a route were open, it would serve (or
 * store) it. Checked against the route's own schemas below, so a new route needs its sample here.
 */
const VALID_PATH_VALUES: Readonly<Record<string, string>> = { petId: '1' };
const VALID_BODIES: Readonly<Record<string, unknown>> = { createPet: { name: 'Rex', categoryId: 1 } };
const PROBED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

function fillPath(template: string, value: (name: string) => string = (name) => VALID_PATH_VALUES[name] ?? ''): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(value(name)));
}

/** A request as sent from the server root: its label, path and query, and fetch options. */
type Probe = [label: string, target: string, init: RequestInit];

function probe(method: string, target: string, init: RequestInit = {}, detail = ''): Probe {
  return [`${method} ${target}${detail}`, target, { ...init, method }];
}

/**
 * Every request an anonymous caller could send, derived from the route table: each route called
 * as a client would, then the same with each part it checks made invalid (so the key is shown to be
 * checked before anything else), every other method on each route's path, and paths no route has.
 */
function anonymousProbes(): Probe[] {
  const probes: Probe[] = [];
  const paths = new Set<string>();
  for (const route of routes as readonly Route[]) {
    const target = BASE_PATH + fillPath(route.path);
    paths.add(target);
    const reads = (part: RequestPart) => route.reads.includes(part);
    const body = reads('body') ? JSON.stringify(VALID_BODIES[route.operationId]) : undefined;
    probes.push(probe(route.method, target, body === undefined ? {} : { headers: jsonType, body }));
    if (reads('query')) probes.push(probe(route.method, `${target}?no_such_parameter=1`));
    if (reads('path')) {
      probes.push(probe(route.method, BASE_PATH + fillPath(route.path, () => 'not a valid value'), {}, ' (invalid path parameter)'));
    }
    if (reads('body')) {
      probes.push(
        probe(route.method, target, { headers: jsonType, body: '{' }, ' with malformed JSON'),
        probe(route.method, target, { headers: jsonType, body: '{"no_such_field":1}' }, ' with an unknown field'),
        probe(route.method, target, { headers: { 'content-type': 'text/plain' }, body }, ' as text/plain'),
        probe(route.method, target, { headers: jsonType, body: ' '.repeat(20_000) }, ' over 16 KiB'),
      );
    }
  }
  // Methods no route serves on a known path reach the $default route: it must refuse them just the same.
  for (const target of paths) {
    for (const method of PROBED_METHODS) {
      if (allowedMethods(target).includes(method as HttpMethod)) continue;
      const writes = method === 'POST' || method === 'PUT' || method === 'PATCH';
      probes.push(probe(method, target, writes ? { headers: jsonType, body: pet } : {}));
    }
  }
  // Paths no route has: made up, named by the spec but not offered, a known path one segment too
  // deep, and outside the version segment. All reach the $default route on API Gateway.
  const unknownPaths = [
    `${BASE_PATH}/nope`,
    `${BASE_PATH}/store/orders`,
    ...[...paths].map((path) => `${path}/extra`),
    BASE_PATH,
    '/',
    '/v2/pets',
  ];
  for (const target of unknownPaths) {
    probes.push(probe('GET', target), probe('POST', target, { headers: jsonType, body: pet }));
  }
  return probes;
}

const ANONYMOUS_PROBES = anonymousProbes();

describe('the anonymous probes', () => {
  it.each(routes.map((route) => [routeKey(route), route] as const))('call %s with values its schemas accept', (_, route: Route) => {
    const schemas = schemasOf(route.operationId);
    if (schemas.path) {
      const parameters = Object.fromEntries(pathParameterNames(route.path).map((name) => [name, VALID_PATH_VALUES[name]]));
      expect(v.safeParse(schemas.path, parameters).success, `VALID_PATH_VALUES for ${route.path}`).toBe(true);
    }
    if (schemas.body) {
      expect(v.safeParse(schemas.body, VALID_BODIES[route.operationId]).success, `VALID_BODIES.${route.operationId}`).toBe(true);
    }
    expect(ANONYMOUS_PROBES.map(([label]) => label)).toContain(`${route.method} ${BASE_PATH}${fillPath(route.path)}`);
  });
});

/** Sends a probe from the server root, checked against openapi.json like every other test request. */
function send([, target, init]: Probe, credential: Credential): Promise<Response> {
  return fetchDocumented(`http://localhost:${api.port}${target}`, withCredential(init, credential));
}

function withCredential(init: RequestInit, credential: Credential): RequestInit & { anonymous: boolean } {
  const headers = new Headers(init.headers);
  const header = credential.header();
  if (header !== undefined) headers.set('authorization', header);
  return { ...init, headers, anonymous: true };
}

describe.each([...WITHOUT_TOKEN, ...WITH_BAD_TOKEN])('a request with $label', (credential) => {
  it.each(ANONYMOUS_PROBES)('is answered 401 unauthorized on %s', async (...request) => {
    const response = await send(request, credential);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store"(?:, error="invalid_token")?$/);
    await expectError(response, 401, 'unauthorized');
  });
});

describe('an anonymous caller', () => {
  it('stores nothing, whatever it sends to any route', async () => {
    const before = { pets: await storedPets(api.documents), records: await idempotencyRecords(api.documents) };
    for (const credential of [...WITHOUT_TOKEN, ...WITH_BAD_TOKEN]) {
      for (const request of ANONYMOUS_PROBES) expect((await send(request, credential)).status, request[0]).toBe(401);
    }
    expect({ pets: await storedPets(api.documents), records: await idempotencyRecords(api.documents) }).toEqual(before);
  });
});

describe('the WWW-Authenticate challenge', () => {
  it.each(WITHOUT_TOKEN)('has no error code for $label (no token was sent)', async (credential) => {
    const response = await api.request('/pets', withCredential({}, credential));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(credential.challenge);
  });

  it.each(WITH_BAD_TOKEN)('has error="invalid_token" for $label', async (credential) => {
    const response = await api.request('/pets', withCredential({}, credential));
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(credential.challenge);
  });
});

describe('accepted credentials', () => {
  it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('accept the scheme written %s', async (scheme) => {
    const response = await api.request('/pets', { headers: { authorization: `${scheme} ${DEV_KEY}` } });
    expect(response.status).toBe(200);
  });

  it('registers exactly the configured DEV_API_KEY, stored only as its hash', async () => {
    expect(api.apiKey).toBe(DEV_KEY);
    const active = (await keys.list()).filter((record) => record.name === DEV_KEY_NAME && record.revokedAt === undefined);
    expect(active).toHaveLength(1);
    expect(active[0]!.keyHash).toBe(hashApiKey(DEV_KEY));
    expect(JSON.stringify(await keys.list())).not.toContain(DEV_KEY);
  });

  it('accepts a key issued while the API runs, on its first use', async () => {
    const { apiKey } = await issueApiKey(keys, 'issued during the test');
    expect((await api.request('/pets', { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  });
});

describe('revocation', () => {
  it('rejects a key revoked with the key tooling through the API', async () => {
    const { apiKey } = await issueApiKey(keys, 'to be revoked by name');
    expect(await revokeKeysNamed(keys, 'to be revoked by name')).toHaveLength(1);
    const response = await api.request('/pets', { headers: { authorization: `Bearer ${apiKey}` } });
    expect(response.headers.get('www-authenticate')).toBe(INVALID_TOKEN_CHALLENGE);
    await expectError(response, 401, 'unauthorized');
  });

  it('stops accepting a revoked key once the cache time has passed, against the real key table', async () => {
    let clock = Date.now();
    const authenticate = createAuthenticator(keys, { now: () => clock });
    const { apiKey, record } = await issueApiKey(keys, 'revoked while cached');
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'allowed', keyId: record.keyId });

    expect(await keys.revoke(record.keyId, new Date())).toBe(true);
    clock += KEY_CACHE_TTL_MS;
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
    clock += 60_000;
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
  });

  it('rejects a revoked key 60 seconds after revocation even when it was used a moment before', async () => {
    let clock = Date.now();
    const authenticate = createAuthenticator(keys, { now: () => clock });
    const { apiKey, record } = await issueApiKey(keys, 'used just before revocation');
    // Used, so its verdict is cached, the moment before the revocation reaches the table.
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'allowed', keyId: record.keyId });
    await keys.revoke(record.keyId, new Date(clock));
    // Whatever the authorizer cached, 60 s after the revocation the key must be refused.
    clock += 60_000;
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
  });
});
