import { createHash, randomBytes } from 'node:crypto';

/** Prefix of generated keys, so a leaked key is recognisable to secret scanners and people. */
export const API_KEY_PREFIX = 'pets_';

/** A new random API key: 256 bits from the CSPRNG, base64url-encoded. */
export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** A new public identifier for a key, safe to log and show. */
export function generateKeyId(): string {
  return `key_${randomBytes(8).toString('hex')}`;
}

/**
 * Keys are stored only as this digest. A fast hash is right here: keys are 256-bit random values,
 * not passwords, so there is nothing to brute-force.
 */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey, 'utf8').digest('hex');
}

/** RFC 6750 b64token; anything else in the header is malformed. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The key from an `Authorization` header: undefined when absent, null when not a bearer token. */
export function readBearerToken(authorization: string | undefined): string | null | undefined {
  if (authorization === undefined || authorization.trim() === '') return undefined;
  return BEARER.exec(authorization)?.[1] ?? null;
}

/** What a configured key (DEV_API_KEY) must look like to be usable as a bearer token. */
export function isUsableApiKey(apiKey: string): boolean {
  return apiKey.length >= 16 && apiKey.length <= 512 && readBearerToken(`Bearer ${apiKey}`) === apiKey;
}
