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

/** RFC 6750 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

/**
 * The key from an `Authorization` header. Undefined when there are no bearer credentials at all
 * (no header, another scheme such as Basic, or `Bearer` alone): RFC 6750 §3.1 treats those as
 * "no authentication information". Null when a bearer token is present but malformed.
 */
export function readBearerToken(authorization: string | undefined): string | null | undefined {
  const [, scheme = '', separator = '', credentials = ''] = /^(\S*)(\s*)(.*)$/s.exec((authorization ?? '').trim()) ?? [];
  if (scheme.toLowerCase() !== 'bearer' || credentials === '') return undefined;
  // RFC 7235: the scheme and its credentials are separated by spaces, nothing else.
  return /^ +$/.test(separator) && B64TOKEN.test(credentials) ? credentials : null;
}

/** What a configured key (DEV_API_KEY) must look like to be usable as a bearer token. */
export function isUsableApiKey(apiKey: string): boolean {
  return apiKey.length >= 16 && apiKey.length <= 512 && readBearerToken(`Bearer ${apiKey}`) === apiKey;
}
