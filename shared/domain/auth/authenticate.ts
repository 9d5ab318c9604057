import { timingSafeEqual } from 'node:crypto';
import { logger } from '../../runtime/logger';
import { expiryOf, keyStateAt, type ApiKeyRecord, type ApiKeyStore } from './api-key-store';
import { hashApiKey, readBearerToken } from './api-keys';
import type { AuthorizerContext } from './authorizer-context';
import { createVerdictCache } from './verdict-cache';

/**
 * How long one function instance trusts a key lookup, and so the bound on revocation. API Gateway's own
 * authorizer cache cannot be used (docs/authentication.md), so this cache keeps DynamoDB off the hot path.
 */
export const KEY_CACHE_TTL_MS = 30_000;
/**
 * Accepted keys kept, and apart from them refused tokens: at most this many of each per instance, so a flood of
 * refusals cannot push out keys in use. What a full cache weighs is in docs/authentication.md.
 */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

export interface AuthenticatorOptions {
  readonly cacheTtlMs?: number;
  readonly now?: () => number;
}

export type Authenticate = (authorization: string | undefined) => Promise<AuthorizerContext>;

/**
 * Creates the key check used by the authorizer: bearer token → verdict, with a short cache. A key is
 * accepted while it is neither revoked nor expired, and a cached acceptance never outlives the key's expiry.
 */
export function createAuthenticator(store: ApiKeyStore, options: AuthenticatorOptions = {}): Authenticate {
  const { cacheTtlMs = KEY_CACHE_TTL_MS, now = Date.now } = options;
  const cache = createVerdictCache(KEY_CACHE_MAX_ENTRIES);

  return async (authorization) => {
    const token = readBearerToken(authorization);
    if (token === undefined) return { outcome: 'missing' };
    if (token === null) return { outcome: 'invalid' };

    const keyHash = hashApiKey(token);
    const cached = cache.find(keyHash, now());
    if (cached !== undefined) return cached;

    let verdict: AuthorizerContext;
    let cachedUntil = now() + cacheTtlMs;
    try {
      const record = await store.findByHash(keyHash);
      const matches = record !== undefined && timingSafeEqual(Buffer.from(record.keyHash, 'hex'), Buffer.from(keyHash, 'hex'));
      verdict = matches ? judgeKey(record, now()) : { outcome: 'invalid' };
      if (matches && verdict.outcome === 'allowed') cachedUntil = Math.min(cachedUntil, expiryOf(record));
    } catch (error) {
      // Never cache an outage: the next request should try the store again.
      logger.error('API key lookup failed', error instanceof Error ? error : String(error));
      return { outcome: 'unavailable' };
    }
    cache.keep(keyHash, verdict, cachedUntil);
    return verdict;
  };
}

/** The verdict on a key the store holds: allowed while active; refused when revoked, expired or its expiry unreadable. */
function judgeKey(record: ApiKeyRecord, now: number): AuthorizerContext {
  const state = keyStateAt(record, now);
  // Refused like any bad key, but the operator who wrote that expiry should hear why.
  if (state === 'malformed-expiry') logger.warn('API key refused: its expiresAt is not an ISO 8601 instant', { keyId: record.keyId });
  return state === 'active' ? { outcome: 'allowed', keyId: record.keyId } : { outcome: 'invalid' };
}
