import { randomUUID } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { IDEMPOTENCY_TTL_SECONDS } from '../../shared/domain/idempotency/idempotent-operation';
import { expectError } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { apiKeyStore, idempotencyRecords, newPet, postPet, postPetWithKey, storedPets, type PetBody } from '../helpers/pets';

/** `Idempotency-Key` on POST /v1/pets over HTTP, against dynalite; tables are read directly. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

async function petCount(): Promise<number> {
  return (await storedPets(api.documents)).length;
}

describe('POST /v1/pets with an Idempotency-Key', () => {
  it('answers a repeat with the same key and body with the original 201 and body, marked as a replay, and creates nothing', async () => {
    const key = randomUUID();
    const body = newPet({ status: 'available' });
    const first = await postPetWithKey(api, body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = (await first.json()) as PetBody;
    const count = await petCount();

    for (let retry = 0; retry < 3; retry++) {
      const again = await postPetWithKey(api, body, key);
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(await again.json()).toEqual(created);
    }
    expect(await petCount()).toBe(count);
  });

  it('treats the same body written with its fields in another order as the same request', async () => {
    const key = randomUUID();
    const first = await postPet(api, '{"name":"Order","categoryId":2,"status":"sold"}', {
      'content-type': 'application/json',
      'idempotency-key': key,
    });
    const again = await postPet(api, '{"status":"sold","categoryId":2,"name":"Order"}', {
      'content-type': 'application/json',
      'idempotency-key': key,
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
  });

  it('answers the same key with a different body 422 idempotency_key_reused, and creates nothing', async () => {
    const key = randomUUID();
    expect((await postPetWithKey(api, newPet({ name: 'Original' }), key)).status).toBe(201);
    const count = await petCount();
    await expectError(await postPetWithKey(api, newPet({ name: 'Something else' }), key), 422, 'idempotency_key_reused');
    expect(await petCount()).toBe(count);
  });

  it('scopes keys to the API key that sent them: another client with the same key gets its own pet', async () => {
    const key = randomUUID();
    const body = newPet();
    const mine = (await (await postPetWithKey(api, body, key)).json()) as PetBody;
    const other = await issueApiKey(apiKeyStore(api.documents), 'another client');
    const theirs = await postPetWithKey(api, body, key, { authorization: `Bearer ${other.apiKey}` });
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(((await theirs.json()) as PetBody).id).not.toBe(mine.id);
  });

  it('keeps the record of a completed request for at least 24 hours, without the key itself', async () => {
    const key = `visible-${randomUUID()}`;
    const before = Math.floor(Date.now() / 1000);
    expect((await postPetWithKey(api, newPet(), key)).status).toBe(201);
    const records = await idempotencyRecords(api.documents);
    const record = records.find((item) => (item.expiration as number) >= before + IDEMPOTENCY_TTL_SECONDS);
    expect(record).toMatchObject({ status: 'COMPLETED' });
    expect(JSON.stringify(records)).not.toContain(key);
  });

  it('does not let an expired record block its key: expiry is checked in code, as dynalite has no TTL', async () => {
    const key = randomUUID();
    const body = newPet();
    const { pet: created, recordId: id } = await createWithKey(body, key);
    // Make the record look like a request still running, then like one whose record has expired.
    await setRecord(id, {
      status: 'INPROGRESS',
      in_progress_expiration: Date.now() + 60_000,
      expiration: Math.floor(Date.now() / 1000) + 60,
    });
    await expectError(await postPetWithKey(api, body, key), 409, 'idempotency_key_in_use');
    await setRecord(id, { expiration: Math.floor(Date.now() / 1000) - 1 });
    const after = await postPetWithKey(api, body, key);
    expect(after.status).toBe(201);
    // The pet itself still settles it: the same pet, not a second one.
    expect(await after.json()).toEqual(created);
  });

  it('answers 409 with Retry-After while a request with the same key is in progress', async () => {
    const key = randomUUID();
    const body = newPet();
    const { recordId: id } = await createWithKey(body, key);
    await setRecord(id, { status: 'INPROGRESS', in_progress_expiration: Date.now() + 60_000 });
    const response = await postPetWithKey(api, body, key);
    expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
    await expectError(response, 409, 'idempotency_key_in_use');
  });

  it('lets a request whose first attempt died (its in-progress record outlived the Lambda deadline) run again', async () => {
    const key = randomUUID();
    const body = newPet();
    const { pet: created, recordId: id } = await createWithKey(body, key);
    await setRecord(id, { status: 'INPROGRESS', in_progress_expiration: Date.now() - 1 });
    const response = await postPetWithKey(api, body, key);
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual(created);
  });
});

describe('POST /v1/pets: the Idempotency-Key itself', () => {
  it.each([
    ['empty', ''],
    ['256 characters long', 'k'.repeat(256)],
    ['not ASCII', 'clé-unique'],
    ['a control character', 'tab\there'],
  ])('rejects a key that is %s with 400 invalid_parameter, naming the header, and stores nothing', async (_, key) => {
    const count = await petCount();
    const error = await expectError(await postPetWithKey(api, newPet(), key), 400, 'invalid_parameter');
    expect(error.message).toContain('Idempotency-Key');
    expect(await petCount()).toBe(count);
  });

  it.each([
    ['one character', 'k'],
    ['255 printable characters, spaces and punctuation included', `${'a b~!"#'.repeat(36)}xyz`],
  ])('accepts a key of %s', async (_, key) => {
    expect(key.length).toBeLessThanOrEqual(255);
    expect((await postPetWithKey(api, newPet(), key)).status).toBe(201);
  });

  it('changes nothing without the header: the same body twice makes two pets', async () => {
    const body = newPet();
    const first = (await (await postPet(api, body)).json()) as PetBody;
    const second = (await (await postPet(api, body)).json()) as PetBody;
    expect(second.id).not.toBe(first.id);
    const stored = (await storedPets(api.documents)).filter((pet) => pet.name === body.name);
    expect(stored).toHaveLength(2);
  });
});

/** Creates a pet with a key and returns it with the id of the idempotency record its request added. */
async function createWithKey(body: Record<string, unknown>, key: string): Promise<{ pet: PetBody; recordId: string }> {
  const before = new Set((await idempotencyRecords(api.documents)).map((item) => item.id));
  const response = await postPetWithKey(api, body, key);
  expect(response.status).toBe(201);
  const added = (await idempotencyRecords(api.documents)).filter((item) => !before.has(item.id));
  expect(added, 'the request added exactly one record').toHaveLength(1);
  return { pet: (await response.json()) as PetBody, recordId: added[0]!.id as string };
}

/** Changes a record the way time or a crashed request would: a test cannot wait 24 hours. */
async function setRecord(id: string, values: Record<string, unknown>): Promise<void> {
  const names = Object.keys(values);
  await api.documents.send(
    new UpdateCommand({
      TableName: LOCAL_TABLES.idempotency,
      Key: { id },
      UpdateExpression: `SET ${names.map((_, index) => `#n${index} = :v${index}`).join(', ')}`,
      ExpressionAttributeNames: Object.fromEntries(names.map((name, index) => [`#n${index}`, name])),
      ExpressionAttributeValues: Object.fromEntries(names.map((name, index) => [`:v${index}`, values[name]])),
    }),
  );
}
