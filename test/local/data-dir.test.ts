import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEV_KEY_NAME } from '../../local/local-api';
import { revokeKeysNamed } from '../../src/domain/auth/manage-api-keys';
import { startTestApi } from '../helpers/local-api';
import { apiKeyStore } from '../helpers/pets';

const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-data-'));
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const OTHER_KEY = 'data-dir-test-key-0123456789';

describe('npm start with DATA_DIR', () => {
  let firstKey: string;
  let petId: unknown;

  it('keeps the development key with the data: a restart serves the same key, and it still reads the pets', async () => {
    const first = await startTestApi({ dataDir });
    try {
      firstKey = first.apiKey;
      petId = (await first.createPet({ name: 'Kept', categoryId: 1 })).id;
    } finally {
      await first.close();
    }

    const second = await startTestApi({ dataDir });
    try {
      expect(second.apiKey).toBe(firstKey);
      const response = await second.request(`/pets/${petId}`, { headers: { authorization: `Bearer ${firstKey}` } });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ id: petId, name: 'Kept' });
    } finally {
      await second.close();
    }
  });

  it('keeps that key readable by its owner only', () => {
    expect(statSync(join(dataDir, 'dev-api-key')).mode & 0o777).toBe(0o600);
  });

  it('serves DEV_API_KEY instead when it is set, and the kept key stops working', async () => {
    const api = await startTestApi({ dataDir, devApiKey: OTHER_KEY });
    try {
      expect(api.apiKey).toBe(OTHER_KEY);
      expect((await api.request('/pets', { headers: { authorization: `Bearer ${firstKey}` } })).status).toBe(401);
      expect((await api.request('/pets', { headers: { authorization: `Bearer ${OTHER_KEY}` } })).status).toBe(200);
    } finally {
      await api.close();
    }
  });

  it('issues and keeps a new key on the next start without DEV_API_KEY, since the kept one was revoked', async () => {
    const api = await startTestApi({ dataDir });
    try {
      expect(api.apiKey).not.toBe(firstKey);
      expect(api.apiKey).not.toBe(OTHER_KEY);
      expect((await api.request('/pets')).status).toBe(200);
    } finally {
      await api.close();
    }
    const again = await startTestApi({ dataDir });
    try {
      expect(again.apiKey).toBe(api.apiKey);
    } finally {
      await again.close();
    }
  });

  it('refuses to start with a DEV_API_KEY that has been revoked, rather than serve another key', async () => {
    const revoked = 'revoked-dev-key-0123456789abcdef';
    const api = await startTestApi({ dataDir, devApiKey: revoked });
    try {
      await revokeKeysNamed(apiKeyStore(api.documents), DEV_KEY_NAME);
    } finally {
      await api.close();
    }
    await expect(startTestApi({ dataDir, devApiKey: revoked })).rejects.toThrow(/DEV_API_KEY has been revoked/);
  });
});
