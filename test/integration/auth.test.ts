import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../shared/auth/api-keys';
import { createAuthenticator, KEY_CACHE_TTL_MS } from '../../shared/auth/authenticate';
import type { DynamoApiKeyStore } from '../../shared/auth/dynamo-api-key-store';
import { issueApiKey, revokeKeysNamed } from '../../shared/auth/manage-api-keys';
import { DEV_KEY_NAME } from '../../local/local-api';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { apiKeyStore, documentClient, listedIds } from '../helpers/pets';

const DEV_KEY = 'my-dev-key-0123456789';
const CHALLENGE = 'Bearer realm="animal-store"';
const INVALID_TOKEN_CHALLENGE = 'Bearer realm="animal-store", error="invalid_token"';

let api: TestApi;
let client: DynamoDBDocumentClient;
let keys: DynamoApiKeyStore;
let revokedKey: string;

beforeAll(async () => {
  api = await startTestApi({ devApiKey: DEV_KEY });
  client = documentClient(api);
  keys = apiKeyStore(client);
  const revoked = await issueApiKey(keys, 'revoked before first use');
  await keys.revoke(revoked.record.keyId, new Date());
  revokedKey = revoked.apiKey;
});
afterAll(async () => {
  client?.destroy();
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
  { label: 'a token with a space in it', header: () => `Bearer ${DEV_KEY.slice(0, 8)} ${DEV_KEY.slice(8)}`, challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'a token with illegal characters', header: () => 'Bearer abc$def"ghi', challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'an unknown key', header: () => 'Bearer pets_thisKeyWasNeverIssuedByTheService0123456789', challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'the dev key with a character added', header: () => `Bearer ${DEV_KEY}x`, challenge: INVALID_TOKEN_CHALLENGE },
  { label: 'a revoked key', header: () => `Bearer ${revokedKey}`, challenge: INVALID_TOKEN_CHALLENGE },
];

const pet = JSON.stringify({ name: 'Rex', categoryId: 1 });
const jsonType = { 'content-type': 'application/json' };

/** Every kind of request, so an anonymous caller can be shown to learn nothing from any of them. */
const REQUESTS: Array<[string, string, RequestInit]> = [
  ['GET /v1/pets', '/pets', {}],
  ['GET /v1/pets with an invalid limit', '/pets?limit=0', {}],
  ['GET /v1/pets with an unknown parameter', '/pets?foo=1', {}],
  ['GET /v1/pets with a garbage cursor', '/pets?cursor=garbage', {}],
  ['POST /v1/pets with a valid pet', '/pets', { method: 'POST', headers: jsonType, body: pet }],
  ['POST /v1/pets with malformed JSON', '/pets', { method: 'POST', headers: jsonType, body: '{' }],
  ['POST /v1/pets with an unknown field', '/pets', { method: 'POST', headers: jsonType, body: '{"id":1}' }],
  ['POST /v1/pets as text/plain', '/pets', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: pet }],
  ['POST /v1/pets over 16 KiB', '/pets', { method: 'POST', headers: jsonType, body: ' '.repeat(20_000) }],
  ['GET /v1/pets/1', '/pets/1', {}],
  ['GET /v1/pets/abc', '/pets/abc', {}],
  ['GET /v1/nope', '/nope', {}],
  ['DELETE /v1/pets', '/pets', { method: 'DELETE' }],
  ['POST /v1/pets/1', '/pets/1', { method: 'POST', headers: jsonType, body: pet }],
];

function withCredential(init: RequestInit, credential: Credential): RequestInit & { anonymous: boolean } {
  const headers = new Headers(init.headers);
  const header = credential.header();
  if (header !== undefined) headers.set('authorization', header);
  return { ...init, headers, anonymous: true };
}

describe.each([...WITHOUT_TOKEN, ...WITH_BAD_TOKEN])('a request with $label', (credential) => {
  it.each(REQUESTS)('is answered 401 unauthorized on %s', async (_, path, init) => {
    const response = await api.request(path, withCredential(init, credential));
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="animal-store"(?:, error="invalid_token")?$/);
    await expectError(response, 401, 'unauthorized');
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

  it('stores nothing for rejected anonymous creates', async () => {
    const before = await listedIds(api);
    for (const credential of [...WITHOUT_TOKEN, ...WITH_BAD_TOKEN]) {
      const response = await api.request('/pets', withCredential({ method: 'POST', headers: jsonType, body: pet }, credential));
      expect(response.status).toBe(401);
    }
    expect(await listedIds(api)).toEqual(before);
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

  it('bounds the authorizer cache well within 60 seconds', () => {
    expect(KEY_CACHE_TTL_MS).toBeGreaterThan(0);
    expect(KEY_CACHE_TTL_MS).toBeLessThanOrEqual(60_000);
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
    await keys.revoke(record.keyId, new Date(clock));
    // Looked up at the last moment before the revocation reached the table would have been cached;
    // whatever it cached, 60 s after the revocation the key must be refused.
    clock += 60_000;
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
  });
});
