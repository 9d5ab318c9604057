import type { ApiKeyRecord, ApiKeyStore } from './api-key-store';
import { generateApiKey, generateKeyId, hashApiKey } from './api-keys';

export interface IssuedApiKey {
  /** The key itself: shown once, never stored. */
  readonly apiKey: string;
  readonly record: ApiKeyRecord;
}

/** Registers a key under a name: a new random one, or `apiKey` when the operator supplies it. */
export async function issueApiKey(store: ApiKeyStore, name: string, apiKey = generateApiKey()): Promise<IssuedApiKey> {
  const record: ApiKeyRecord = {
    keyId: generateKeyId(),
    keyHash: hashApiKey(apiKey),
    name,
    createdAt: new Date().toISOString(),
  };
  await store.add(record);
  return { apiKey, record };
}

/** Revokes every active key of a name but `exceptKeyId`; returns the ids revoked. */
export async function revokeKeysNamed(store: ApiKeyStore, name: string, exceptKeyId?: string): Promise<string[]> {
  const active = (await store.list()).filter(
    (record) => record.name === name && record.revokedAt === undefined && record.keyId !== exceptKeyId,
  );
  const now = new Date();
  for (const record of active) await store.revoke(record.keyId, now);
  return active.map((record) => record.keyId);
}
