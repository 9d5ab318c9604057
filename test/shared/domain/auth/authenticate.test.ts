import { describe, expect, it } from 'vitest';
import { hashApiKey } from '../../../../shared/domain/auth/api-keys';
import { createAuthenticator, KEY_CACHE_MAX_ENTRIES, KEY_CACHE_TTL_MS } from '../../../../shared/domain/auth/authenticate';
import { issueApiKey } from '../../../../shared/domain/auth/manage-api-keys';
import { InMemoryApiKeyStore } from '../../../helpers/in-memory-stores';
import { unknownKey } from '../../../../tools/bench/answer-classes';

async function setUp() {
  const store = new InMemoryApiKeyStore();
  let clock = 1_000_000;
  const authenticate = createAuthenticator(store, { now: () => clock });
  const { apiKey, record } = await issueApiKey(store, 'test');
  return { store, authenticate, apiKey, record, now: () => clock, advance: (ms: number) => (clock += ms) };
}

/** A key stored with an expiry `inMs` from now, as the pre-traffic hook issues its check key. */
async function setUpExpiring(inMs: number) {
  const setup = await setUp();
  const expiresAt = new Date(setup.now() + inMs).toISOString();
  setup.store.keys.set(setup.record.keyHash, { ...setup.record, expiresAt });
  return setup;
}

describe('API key authentication', () => {
  it('allows an active key and names it', async () => {
    const { authenticate, apiKey, record } = await setUp();
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'allowed', keyId: record.keyId });
  });

  it.each(['bearer', 'BEARER', 'BeArEr'])('accepts the scheme written %s', async (scheme) => {
    const { authenticate, apiKey } = await setUp();
    expect((await authenticate(`${scheme} ${apiKey}`)).outcome).toBe('allowed');
  });

  it.each([undefined, '', '   ', 'Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Token abc'])(
    'reports a missing key for the header %j, which carries no bearer credentials',
    async (header) => {
      const { authenticate } = await setUp();
      expect(await authenticate(header)).toEqual({ outcome: 'missing' });
    },
  );

  it.each(['Bearer two tokens', 'Bearer a"b', 'Bearer =abc', 'Bearer\tabc', 'Bearer  abc'])(
    'rejects the malformed bearer header %j',
    async (header) => {
      const { authenticate } = await setUp();
      expect(await authenticate(header)).toEqual({ outcome: 'invalid' });
    },
  );

  it('rejects an unknown key', async () => {
    const { authenticate } = await setUp();
    expect(await authenticate('Bearer pets_not-a-key-we-issued')).toEqual({ outcome: 'invalid' });
  });

  it('stores only the hash of a key', async () => {
    const { store, apiKey } = await setUp();
    expect(JSON.stringify([...store.keys.values()])).not.toContain(apiKey);
    expect(store.keys.has(hashApiKey(apiKey))).toBe(true);
  });

  it('rejects a revoked key once the cached verdict expires, at most 60 seconds after it was cached', async () => {
    const { store, authenticate, apiKey, record, advance } = await setUp();
    expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
    await store.revoke(record.keyId, new Date());
    advance(60_000);
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
  });

  it('accepts a key until its expiry and refuses it from then on, like a revoked one', async () => {
    const { authenticate, apiKey, record, advance } = await setUpExpiring(KEY_CACHE_TTL_MS * 10);
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'allowed', keyId: record.keyId });
    advance(KEY_CACHE_TTL_MS * 10 - 1);
    expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
    advance(1);
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
  });

  it("never serves a cached acceptance past the key's expiry, though the cache period is longer", async () => {
    const { store, authenticate, apiKey, advance } = await setUpExpiring(10_000);
    expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
    advance(10_000);
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
    expect(store.lookups).toBe(2);
  });

  it.each([
    ['words', 'soon'],
    ['words around a year Date.parse reads', 'junk 2099'],
    ['a bare year', '2099'],
    ['a date without a time', '2099-01-01'],
    ['an instant written otherwise than the project writes one', '2099-01-01T00:00:00Z'],
    ['a day the month does not have', '2099-02-31T00:00:00.000Z'],
    ['a list holding a year', [2099]],
    ['a number of milliseconds', 4_102_444_800_000],
    ['null', null],
  ])('refuses a key whose expiry is %s (%j): an expiry it cannot read is not one it can honour', async (_, expiresAt) => {
    const { store, authenticate, apiKey, record } = await setUp();
    store.keys.set(record.keyHash, { ...record, expiresAt: expiresAt as string });
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'invalid' });
  });

  it('accepts a key whose expiry is an instant far ahead, written as the project writes one', async () => {
    const { store, authenticate, apiKey, record } = await setUp();
    store.keys.set(record.keyHash, { ...record, expiresAt: '2099-01-01T00:00:00.000Z' });
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'allowed', keyId: record.keyId });
  });

  it('looks a key up once per cache period, not once per request', async () => {
    const { store, authenticate, apiKey, advance } = await setUp();
    for (let request = 0; request < 5; request++) await authenticate(`Bearer ${apiKey}`);
    expect(store.lookups).toBe(1);
    advance(KEY_CACHE_TTL_MS + 1);
    await authenticate(`Bearer ${apiKey}`);
    expect(store.lookups).toBe(2);
  });

  it('reports an unavailable store without caching the failure', async () => {
    const { store, authenticate, apiKey } = await setUp();
    store.failWith = new Error('throttled');
    expect(await authenticate(`Bearer ${apiKey}`)).toEqual({ outcome: 'unavailable' });
    store.failWith = undefined;
    expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
  });
});

describe('the key cache', () => {
  it(`keeps a key in use through a flood of ${2 * KEY_CACHE_MAX_ENTRIES} unknown tokens: it is looked up once`, async () => {
    const { store, authenticate, apiKey } = await setUp();
    const flood = 2 * KEY_CACHE_MAX_ENTRIES;
    for (let token = 0; token < flood; token++) {
      if (token % 100 === 0) expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
      await authenticate(`Bearer ${unknownKey(token)}`);
    }
    expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
    // One lookup per unknown token, and one for the key: the flood never pushed its verdict out.
    expect(store.lookups).toBe(flood + 1);
  });

  it(`keeps at most ${KEY_CACHE_MAX_ENTRIES} refused tokens: the least recently used is looked up again once that many newer ones came`, async () => {
    const { store, authenticate } = await setUp();
    for (let token = 0; token <= KEY_CACHE_MAX_ENTRIES; token++) await authenticate(`Bearer ${unknownKey(token)}`);
    const lookups = store.lookups;
    await authenticate(`Bearer ${unknownKey(KEY_CACHE_MAX_ENTRIES)}`);
    expect(store.lookups).toBe(lookups);
    expect(await authenticate(`Bearer ${unknownKey(0)}`)).toEqual({ outcome: 'invalid' });
    expect(store.lookups).toBe(lookups + 1);
  });

  it(`keeps at most ${KEY_CACHE_MAX_ENTRIES} accepted keys, pushing out the least recently used, not the first cached`, async () => {
    const { store, authenticate, apiKey: first } = await setUp();
    const others = await Promise.all(Array.from({ length: KEY_CACHE_MAX_ENTRIES }, (_, index) => issueApiKey(store, `key ${index}`)));
    const [idle, ...rest] = others.map(({ apiKey }) => apiKey);
    await authenticate(`Bearer ${first}`);
    await authenticate(`Bearer ${idle}`);
    for (const [index, key] of rest.entries()) {
      // The first key cached stays in use; the second is never used again.
      if (index === Math.floor(rest.length / 2)) await authenticate(`Bearer ${first}`);
      await authenticate(`Bearer ${key}`);
    }
    const lookups = store.lookups;
    expect((await authenticate(`Bearer ${first}`)).outcome).toBe('allowed');
    expect(store.lookups).toBe(lookups);
    expect((await authenticate(`Bearer ${idle}`)).outcome).toBe('allowed');
    expect(store.lookups).toBe(lookups + 1);
  });

  it('looks a key in constant use up again once its cache period ends, so its revocation is seen within it', async () => {
    const { store, authenticate, apiKey, record, advance } = await setUp();
    expect((await authenticate(`Bearer ${apiKey}`)).outcome).toBe('allowed');
    await store.revoke(record.keyId, new Date());
    const outcomes: string[] = [];
    for (let second = 1; second <= KEY_CACHE_TTL_MS / 1_000; second++) {
      advance(1_000);
      outcomes.push((await authenticate(`Bearer ${apiKey}`)).outcome);
    }
    expect(outcomes).toEqual([...Array(KEY_CACHE_TTL_MS / 1_000 - 1).fill('allowed'), 'invalid']);
  });
});
