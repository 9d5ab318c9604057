import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { DEV_KEY_NAME } from '../../local/local-api';
import { revokeKeysNamed } from '../../shared/domain/auth/manage-api-keys';
import { PET_STATUSES } from '../../shared/domain/pets/pet-schemas';
import { IDEMPOTENCY_TABLE } from '../../shared/dynamodb/idempotency-table';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { startServerProcess, type RunningServer } from '../helpers/cli';
import { fetchDocumented } from '../helpers/contract';
import { removeItemOnly } from '../helpers/interrupted-writes';
import { documentClient, startTestApi, type TestApi } from '../helpers/local-api';
import { apiKeyStore, idempotencyRecords, type PetBody, storedPets, walkPets } from '../helpers/pets';

const dataDir = mkdtempSync(join(tmpdir(), 'animal-store-data-'));
afterAll(() => {
  rmSync(dataDir, { recursive: true, force: true });
});

const OTHER_KEY = 'data-dir-test-key-0123456789';
const CRASH_KEY = 'data-dir-crash-key-0123456789';
/** Two starts of a real server each, and a dead request's key held until its deadline. */
const CRASH_TEST_TIMEOUT = 180_000;

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

/** What a client of a running `npm start` calls the API with: the server's own key, every answer checked against the document. */
function clientOf(server: RunningServer): Pick<TestApi, 'request'> {
  return {
    request: (path, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${server.apiKey}`);
      return fetchDocumented(`${server.baseUrl}${path}`, { ...init, headers });
    },
  };
}

const tableClients = new Map<RunningServer, DynamoDBDocumentClient>();

/** The tables a running server holds, read straight from its dynalite. */
function tablesOf(server: RunningServer): DynamoDBDocumentClient {
  let client = tableClients.get(server);
  if (client === undefined) {
    client = documentClient({ dynamoDbEndpoint: `http://127.0.0.1:${server.dynamoDbPort}` });
    tableClients.set(server, client);
  }
  return client;
}

function postPet(server: RunningServer, body: Record<string, unknown>, idempotencyKey?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  return clientOf(server).request('/pets', { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Retries a keyed create as a client would, honouring 409 and 503 (the key is held until its dead request's deadline), until 201. */
async function retryUntilCreated(server: RunningServer, body: Record<string, unknown>, idempotencyKey: string): Promise<PetBody> {
  for (let attempt = 1; ; attempt++) {
    const response = await postPet(server, body, idempotencyKey);
    if (response.status === 201) return (await response.json()) as PetBody;
    expect([409, 503], `retry ${attempt} of ${idempotencyKey}`).toContain(response.status);
    expect(attempt, `${idempotencyKey} never settled`).toBeLessThan(30);
    await response.body?.cancel();
    await setTimeout(Number(response.headers.get('retry-after') ?? 1) * 1000);
  }
}

/**
 * What every listing and the pets table must agree on: each listed pet, in every listing, is readable
 * by id, listed once and only under its own status; each listing holds exactly the stored pets it
 * should. Returns the stored pets.
 */
async function expectConsistent(server: RunningServer): Promise<PetBody[]> {
  const stored = await storedPets(tablesOf(server));
  const client = clientOf(server);
  for (const status of [undefined, ...PET_STATUSES]) {
    const listed = (await walkPets(client, { status })).pets;
    const ids = listed.map((pet) => pet.id);
    expect(new Set(ids).size, `a pet listed twice${status ? ` under ${status}` : ''}`).toBe(ids.length);
    const expected = stored.filter((pet) => status === undefined || pet.status === status).map((pet) => pet.id);
    expect(ids.toSorted(), `listing${status ? ` by ${status}` : ''} against the table`).toEqual(expected.toSorted());
    for (const pet of listed) {
      const response = await client.request(`/pets/${pet.id}`);
      expect(response.status, `listed pet ${pet.id} read by id`).toBe(200);
      expect(await response.json()).toEqual(pet);
    }
  }
  return stored;
}

describe('npm start with DATA_DIR after kill -9', () => {
  const dataDirs: string[] = [];
  const freshDataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'animal-store-crash-'));
    dataDirs.push(dir);
    return dir;
  };
  const servers: RunningServer[] = [];
  const start = async (dir: string) => {
    const server = await startServerProcess({ DATA_DIR: dir, DEV_API_KEY: CRASH_KEY });
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    for (const client of tableClients.values()) client.destroy();
    await Promise.all(servers.map((server) => server.stop()));
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'repairs a keyed create killed between its index entries and its pet: unlisted until its retry, then listed once',
    async () => {
      const dir = freshDataDir();
      const body = { name: 'Interrupted', categoryId: 1, status: 'pending' };
      const first = await start(dir);
      const created = (await (await postPet(first, body, 'interrupted-create')).json()) as PetBody;
      // The record a request killed mid-create leaves: still in progress, its deadline since passed.
      const [record] = await idempotencyRecords(tablesOf(first));
      const { [IDEMPOTENCY_TABLE.dataAttribute]: _, ...claim } = record!;
      const inProgress = {
        ...claim,
        [IDEMPOTENCY_TABLE.statusAttribute]: 'INPROGRESS',
        [IDEMPOTENCY_TABLE.inProgressExpiryAttribute]: Date.now() - 1,
      };
      await tablesOf(first).send(new PutCommand({ TableName: LOCAL_TABLES.idempotency, Item: inProgress }));
      const [item] = await storedPets(tablesOf(first));
      await first.stop();
      await removeItemOnly(dir, LOCAL_TABLES.pets, item!);

      const second = await start(dir);
      expect(second.output()).toContain(
        `"message":"DATA_DIR: repaired index entries a crash left out of step with their items: ${LOCAL_TABLES.pets} ${PETS_TABLE.allPetsIndex.name} 1 removed, 0 restored; ${LOCAL_TABLES.pets} ${PETS_TABLE.byStatusIndex.name} 1 removed, 0 restored"`,
      );
      expect(await expectConsistent(second)).toEqual([]);
      expect((await clientOf(second).request(`/pets/${created.id}`)).status).toBe(404);

      const retried = await retryUntilCreated(second, body, 'interrupted-create');
      expect(retried).toEqual(created);
      expect((await expectConsistent(second)).map((pet) => pet.id)).toEqual([created.id]);
      expect(await idempotencyRecords(tablesOf(second))).toEqual([
        expect.objectContaining({ status: 'COMPLETED', data: expect.objectContaining({ pet: created }) }),
      ]);
    },
    CRASH_TEST_TIMEOUT,
  );

  it(
    'loses no acknowledged pet and lists each stored pet once, readable by id, when killed mid-load; so do keyed retries',
    async () => {
      const dir = freshDataDir();
      const first = await start(dir);
      const acknowledged: PetBody[] = [];
      const unansweredKeyed = new Map<string, Record<string, unknown>>();
      let sent = 0;
      let crashed = false;
      const client = async () => {
        while (!crashed) {
          const n = sent++;
          const key = n % 2 === 0 ? `load-${n}` : undefined;
          const body = {
            name: `${key ? 'Keyed' : 'Unkeyed'} ${n}`,
            categoryId: 1,
            ...(n % 4 === 3 ? {} : { status: PET_STATUSES[n % 4] }),
          };
          if (key !== undefined) unansweredKeyed.set(key, body);
          try {
            const response = await postPet(first, body, key);
            if (response.status !== 201) continue;
            acknowledged.push((await response.json()) as PetBody);
            if (key !== undefined) unansweredKeyed.delete(key);
          } catch {
            return; // the server is gone: this request stays unanswered
          }
        }
      };
      const clients = Array.from({ length: 16 }, client);
      await vi.waitFor(() => expect(acknowledged.length).toBeGreaterThanOrEqual(40), { timeout: 60_000, interval: 20 });
      await first.crash();
      crashed = true;
      await Promise.all(clients);
      const keyedSent = Math.ceil(sent / 2);

      const second = await start(dir);
      const stored = await expectConsistent(second);
      expect(stored.map((pet) => pet.id)).toEqual(expect.arrayContaining(acknowledged.map((pet) => pet.id)));

      for (const [key, body] of unansweredKeyed) await retryUntilCreated(second, body, key);
      const settled = await expectConsistent(second);
      expect(settled.length).toBeGreaterThanOrEqual(acknowledged.length + unansweredKeyed.size);
      const records = await idempotencyRecords(tablesOf(second));
      expect(records).toHaveLength(keyedSent);
      expect(records.every((record) => record.status === 'COMPLETED')).toBe(true);
      expect(settled.filter((pet) => pet.name.startsWith('Keyed '))).toHaveLength(keyedSent);
    },
    CRASH_TEST_TIMEOUT,
  );
});
