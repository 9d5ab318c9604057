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
 * and NaN, which no time is before, for an expiry that does not parse, so it refuses the key.
 */
export function expiryOf(record: ApiKeyRecord): number {
  return record.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(record.expiresAt);
}

/** Whether the key works at `now` (milliseconds since the epoch): neither revoked nor expired. */
export function isKeyLive(record: ApiKeyRecord, now: number): boolean {
  return record.revokedAt === undefined && expiryOf(record) > now;
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
