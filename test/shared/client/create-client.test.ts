import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, type Pet } from '../../../shared/client/create-client';
import { startAnswerProxy, throttled, type AnswerProxy, type Decide } from '../../helpers/answer-proxy';
import { startTestApi, type TestApi } from '../../helpers/local-api';
import { expectedOrder, storedPets } from '../../helpers/pets';

let api: TestApi;
const proxies: AnswerProxy[] = [];
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await api?.close();
});

/** A proxy in front of the API (test/helpers/answer-proxy.ts), closed after the file. */
async function proxy(decide: Decide): Promise<AnswerProxy> {
  const started = await startAnswerProxy(api.baseUrl, decide);
  proxies.push(started);
  return started;
}

/** The pets the table holds under a name: what a create stored, read behind the API's back. */
async function storedNamed(name: string): Promise<number> {
  return (await storedPets(api.documents)).filter((pet) => pet.name === name).length;
}

const creates = (seen: AnswerProxy['seen']) => seen.filter((request) => request.method === 'POST');

describe('the client, listing', () => {
  it('walks every pet once, newest first, following each page’s next link, while other creates run', async () => {
    const client = createClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
    const before: Pet[] = [];
    for (let batch = 0; batch < 25; batch++) {
      before.push(
        ...(await Promise.all(Array.from({ length: 10 }, (_, i) => client.createPet({ name: `walked ${batch}-${i}`, categoryId: 7 })))),
      );
    }

    let walking = true;
    const during: Pet[] = [];
    const creating = (async () => {
      while (walking) during.push(await client.createPet({ name: 'created during the walk', categoryId: 8 }));
    })();
    const walked: Pet[] = [];
    let pages = 0;
    for await (const page of client.listPets({ limit: 7 }).pages()) {
      pages++;
      expect(page.pets.length).toBeLessThanOrEqual(7);
      walked.push(...page.pets);
      // Let a create land between pages.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    walking = false;
    await creating;

    const ids = walked.map((pet) => pet.id);
    expect(new Set(ids).size).toBe(ids.length);
    const walkedIds = new Set(ids);
    expect(before.filter((pet) => !walkedIds.has(pet.id))).toEqual([]);
    expect(during.length).toBeGreaterThan(0);
    // Newest first, as the table orders them: a batch's ten creates ran at once.
    const beforeIds = new Set(before.map((pet) => pet.id));
    expect(ids.filter((id) => beforeIds.has(id))).toEqual((await expectedOrder(api.documents)).filter((id) => beforeIds.has(id)));
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(250 / 7));
  });

  it('yields pets one by one across pages, and stops at the last page', async () => {
    const client = createClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await client.createPet({ name: `one by one ${i}`, categoryId: 1, status: 'sold' }));
    const sold: Pet[] = [];
    for await (const pet of client.listPets({ status: 'sold', limit: 2 })) sold.push(pet);
    expect(sold.slice(0, 5)).toEqual([...created].reverse());
    expect(sold.every((pet) => pet.status === 'sold')).toBe(true);
  });
});

describe('the client, creating', () => {
  it('stores exactly one pet when every first answer is lost, retrying with the same key and body', async () => {
    const lossy = await proxy((request, before) =>
      request.method === 'POST' && !before.some((b) => b.headers['idempotency-key'] === request.headers['idempotency-key'])
        ? 'lose-answer'
        : 'forward',
    );
    const client = createClient({ baseUrl: lossy.baseUrl, apiKey: api.apiKey });
    const names = Array.from({ length: 20 }, (_, i) => `lost answer ${i}`);
    const pets = await Promise.all(names.map((name) => client.createPet({ name, categoryId: 2 })));

    expect(pets.map((pet) => pet.name)).toEqual(names);
    const stored = await storedPets(api.documents);
    expect(names.map((name) => stored.filter((pet) => pet.name === name).length)).toEqual(names.map(() => 1));
    const sent = creates(lossy.seen);
    expect(sent).toHaveLength(40);
    for (const name of names) {
      const attempts = sent.filter((request) => JSON.parse(request.body).name === name);
      expect(attempts.map((attempt) => attempt.fault)).toEqual(['lose-answer', 'forward']);
      expect(attempts[1]!.headers['idempotency-key']).toBe(attempts[0]!.headers['idempotency-key']);
      expect(attempts[1]!.body).toBe(attempts[0]!.body);
    }
  });

  it('rejects with the network failure once every attempt’s answer was lost, having stored one pet', async () => {
    const lossy = await proxy((request) => (request.method === 'POST' ? 'lose-answer' : 'forward'));
    const client = createClient({ baseUrl: lossy.baseUrl, apiKey: api.apiKey, maxAttempts: 3 });
    await expect(client.createPet({ name: 'never answered', categoryId: 3 })).rejects.toThrow(TypeError);
    expect(creates(lossy.seen)).toHaveLength(3);
    expect(await storedNamed('never answered')).toBe(1);
  });

  it('retries a connection reset before the request reached the API', async () => {
    const resetting = await proxy((request, before) => (request.method === 'POST' && creates(before).length === 0 ? 'reset' : 'forward'));
    const client = createClient({ baseUrl: resetting.baseUrl, apiKey: api.apiKey });
    expect(await client.createPet({ name: 'reset once', categoryId: 3 })).toMatchObject({ name: 'reset once' });
    expect(creates(resetting.seen).map((request) => request.fault)).toEqual(['reset', 'forward']);
    expect(await storedNamed('reset once')).toBe(1);
  });

  it("waits as long as API Gateway's 429 says in Retry-After before trying again, telling the caller of each answer", async () => {
    const throttling = await proxy((_request, before) => (creates(before).length === 0 ? throttled(1) : 'forward'));
    const client = createClient({ baseUrl: throttling.baseUrl, apiKey: api.apiKey });
    const answers: Array<{ status: number; location: string | null }> = [];
    const pet = await client.createPet(
      { name: 'throttled once', categoryId: 4 },
      { onAnswer: ({ status, headers }) => answers.push({ status, location: headers.get('location') }) },
    );
    expect(answers).toEqual([
      { status: 429, location: null },
      { status: 201, location: `${api.baseUrl}/pets/${pet.id}` },
    ]);
    const [first, second] = creates(throttling.seen);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
    expect(await storedNamed('throttled once')).toBe(1);
  });

  it("waits as long as the API's own 503 says in Retry-After, and stores one pet", async () => {
    const unavailable = await proxy((_request, before) =>
      creates(before).length === 0
        ? {
            status: 503,
            headers: { 'content-type': 'application/json', 'retry-after': '1' },
            body: '{"code":"service_unavailable","message":"The store is unavailable.","status":503}',
          }
        : 'forward',
    );
    const client = createClient({ baseUrl: unavailable.baseUrl, apiKey: api.apiKey });
    await client.createPet({ name: 'unavailable once', categoryId: 4 });
    const [first, second] = creates(unavailable.seen);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
    expect(await storedNamed('unavailable once')).toBe(1);
  });

  it('sends a new idempotency key per pet unless given one, and replays the pet for a key it sent before', async () => {
    const watching = await proxy(() => 'forward');
    const client = createClient({ baseUrl: watching.baseUrl, apiKey: api.apiKey });
    await client.createPet({ name: 'keyed a', categoryId: 5 });
    await client.createPet({ name: 'keyed b', categoryId: 5 });
    const [a, b] = creates(watching.seen).map((request) => request.headers['idempotency-key']);
    expect(a).toMatch(/^[0-9a-f-]{36}$/);
    expect(b).not.toBe(a);

    const first = await client.createPet({ name: 'own key', categoryId: 5 }, { idempotencyKey: 'order-77-pet-1' });
    const again = await client.createPet({ name: 'own key', categoryId: 5 }, { idempotencyKey: 'order-77-pet-1' });
    expect(again).toEqual(first);
    expect(await storedNamed('own key')).toBe(1);
  });
});

describe('the client, reading one pet (deprecated)', () => {
  it('answers the pet, or rejects with not_found for an id no pet has', async () => {
    const client = createClient({ baseUrl: api.baseUrl, apiKey: api.apiKey });
    const pet = await client.createPet({ name: 'read by id', categoryId: 6 });
    expect(await client.getPet(pet.id)).toEqual(pet);
    await expect(client.getPet(pet.id + 1)).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

describe('the client, failing', () => {
  it("rejects a refused create with the API's code, status and message, at once and storing nothing", async () => {
    const watching = await proxy(() => 'forward');
    const client = createClient({ baseUrl: watching.baseUrl, apiKey: api.apiKey });
    const error = await client.createPet({ name: '', categoryId: 1 }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_parameter' });
    expect((error as ApiError).message).toMatch(/name/);
    expect((error as ApiError).requestId).toMatch(/\S/);
    expect(creates(watching.seen)).toHaveLength(1);
    expect(await storedNamed('')).toBe(0);
  });

  it('rejects without a key as the API refuses it: 401 unauthorized', async () => {
    const anonymous = createClient({ baseUrl: api.baseUrl });
    await expect(anonymous.listPets()[Symbol.asyncIterator]().next()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
  });

  it("rejects with API Gateway's own answer when retries run out, its code undefined", async () => {
    const throttling = await proxy(() => throttled(0));
    const client = createClient({ baseUrl: throttling.baseUrl, apiKey: api.apiKey, maxAttempts: 2 });
    const error = await client.createPet({ name: 'always throttled', categoryId: 1 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'ApiError', status: 429, code: undefined, message: 'Too Many Requests' });
    expect(creates(throttling.seen)).toHaveLength(2);
  });

  it('rejects at once, rather than hang, when Retry-After asks for more than a minute', async () => {
    const throttling = await proxy(() => throttled(61));
    const client = createClient({ baseUrl: throttling.baseUrl, apiKey: api.apiKey });
    await expect(client.createPet({ name: 'asked to wait long', categoryId: 1 })).rejects.toMatchObject({ status: 429 });
    expect(creates(throttling.seen)).toHaveLength(1);
  });

  it('gives up an attempt after its timeout, and the call after its last attempt, with a TimeoutError', async () => {
    const silent = await proxy(() => 'stall');
    const client = createClient({ baseUrl: silent.baseUrl, apiKey: api.apiKey, timeoutMs: 200, maxAttempts: 2 });
    await expect(client.createPet({ name: 'never answered in time', categoryId: 1 })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(creates(silent.seen)).toHaveLength(2);
  });

  it('leaves an attempt to the caller’s signal alone when its timeout is Infinity', async () => {
    const silent = await proxy(() => 'stall');
    const client = createClient({ baseUrl: silent.baseUrl, apiKey: api.apiKey, timeoutMs: Infinity, maxAttempts: 2 });
    const call = client.createPet({ name: 'waited for by its caller', categoryId: 1 }, { signal: AbortSignal.timeout(300) });
    await expect(call).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(creates(silent.seen)).toHaveLength(1);
    expect(await storedNamed('waited for by its caller')).toBe(0);
  });

  it('stops at once, with its reason, when the caller aborts, waits included', async () => {
    const throttling = await proxy(() => throttled(30));
    const client = createClient({ baseUrl: throttling.baseUrl, apiKey: api.apiKey });
    const controller = new AbortController();
    const call = client.createPet({ name: 'aborted', categoryId: 1 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error('the caller left')), 100);
    await expect(call).rejects.toThrow('the caller left');
    expect(creates(throttling.seen)).toHaveLength(1);
  });

  it('refuses to follow a next link to another origin, which would carry the key there', async () => {
    const elsewhere = await proxy((request) =>
      request.method === 'GET'
        ? {
            status: 200,
            headers: { 'content-type': 'application/json', link: '<https://example.com/v1/pets?cursor=x>; rel="next"' },
            body: '[]',
          }
        : 'forward',
    );
    const pages = createClient({ baseUrl: elsewhere.baseUrl, apiKey: api.apiKey }).listPets().pages()[Symbol.asyncIterator]();
    expect((await pages.next()).value).toEqual({ pets: [], next: 'https://example.com/v1/pets?cursor=x' });
    await expect(pages.next()).rejects.toThrow(/refusing to send the API key to https:\/\/example.com/);
    expect(elsewhere.seen).toHaveLength(1);
  });
});
