/** An API key as stored: never the key itself, only its SHA-256 digest. */
export interface ApiKeyRecord {
  readonly keyId: string;
  readonly keyHash: string;
  /** Who or what the key is for, chosen by the operator who created it. */
  readonly name: string;
  readonly createdAt: string;
  readonly revokedAt?: string;
  /**
   * When the key stops working by itself (ISO 8601), refused from then on like a revoked one. Only the
   * pre-traffic hook's check keys have one; keys an operator issues work until revoked.
   */
  readonly expiresAt?: string;
}

/**
 * When the key stops working by itself, in milliseconds since the epoch: never for a key without an expiry,
 * and NaN, which no time is before, for an expiry other than an ISO 8601 instant written as this project
 * writes one (`toISOString`: 2026-01-31T12:00:00.000Z). `Date.parse` alone would read "junk 2099", "2099"
 * or a list holding 2099 as a year: a key whose expiry is read loosely may outlive the one meant.
 */
export function expiryOf(record: ApiKeyRecord): number {
  // The store returns whatever the item holds: a number, a list or null are not strings.
  const expiresAt: unknown = record.expiresAt;
  if (expiresAt === undefined) return Number.POSITIVE_INFINITY;
  if (typeof expiresAt !== 'string') return Number.NaN;
  const at = Date.parse(expiresAt);
  return Number.isFinite(at) && new Date(at).toISOString() === expiresAt ? at : Number.NaN;
}

/** Whether a key works at a moment, or why not: a closed list, the authorizer's and `npm run keys -- list`'s. */
export type KeyState = 'active' | 'revoked' | 'expired' | 'malformed-expiry';

/** The key's state at `now` (milliseconds since the epoch); an expiry that does not read as one refuses the key. */
export function keyStateAt(record: ApiKeyRecord, now: number): KeyState {
  if (record.revokedAt !== undefined) return 'revoked';
  const expiry = expiryOf(record);
  if (Number.isNaN(expiry)) return 'malformed-expiry';
  return expiry > now ? 'active' : 'expired';
}

export interface ApiKeyStore {
  findByHash(keyHash: string): Promise<ApiKeyRecord | undefined>;
  add(record: ApiKeyRecord): Promise<void>;
  list(): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; resolves false when no key has that id. Revoking twice keeps the first date. */
  revoke(keyId: string, at: Date): Promise<boolean>;
  /**
   * Marks the key of this hash revoked, as revoke does; resolves false when no key has it. For a writer that
   * knows the hash, such as the pre-traffic hook: a key written a moment ago may not be in the by-id index yet.
   */
  revokeByHash(keyHash: string, at: Date): Promise<boolean>;
}
