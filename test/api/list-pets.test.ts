import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PET_STATUSES, type NewPet, type PetStatus } from '../../shared/domain/pets/pet-schemas';
import { createPet, randomCreationToken } from '../../shared/domain/pets/pet-operations';
import { expectError, nextLink } from '../helpers/http';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { expectedOrder, newPet, petStore, postPet, walkPets, type PetBody } from '../helpers/pets';

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Statuses given to the seeded pets in turn; undefined: created without one. */
const STATUS_CYCLE: Array<PetStatus | undefined> = ['available', 'pending', 'sold', undefined, 'available'];

let api: TestApi;
/** Pets in creation order, each in its own millisecond. */
const created: PetBody[] = [];
/** Pets stored with one shared creation time, to exercise the tie-break. */
const tied: number[] = [];

beforeAll(async () => {
  api = await startTestApi();
  // Created through the domain code the handler runs, on a clock the test sets: each pet in its own
  // millisecond, five in one, without waiting for the real clock to move.
  const start = Date.now() - 60_000;
  const create = async (index: number, at: number) => {
    const status = STATUS_CYCLE[index % STATUS_CYCLE.length];
    const input: NewPet = { name: `Pet ${index}`, categoryId: 1, ...(status ? { status } : {}) };
    const { pet } = await createPet(petStore(api.documents), input, {
      creationToken: randomCreationToken(),
      now: () => new Date(at),
    });
    created.push(pet as PetBody);
  };
  for (let index = 0; index < 12; index++) await create(index, start + index);
  const sameInstant = new Date(start + 100);
  for (let index = 0; index < 5; index++) {
    const { pet } = await createPet(
      petStore(api.documents),
      { name: `Twin ${index}`, categoryId: 2, status: 'available' },
      { creationToken: randomCreationToken(), now: () => sameInstant },
    );
    tied.push(pet.id);
  }
  for (let index = 12; index < 24; index++) await create(index, start + 200 + index);
});

afterAll(async () => {
  await api?.close();
});

const TOTAL = 29;

async function firstPageCursor(query: string): Promise<string> {
  const response = await api.request(`/pets?${query}`);
  expect(response.status).toBe(200);
  const cursor = nextLink(response)?.searchParams.get('cursor');
  expect(cursor).toBeTruthy();
  return cursor!;
}

describe('GET /v1/pets: the listing', () => {
  it('answers 200 with a bare JSON array of pets', async () => {
    const response = await api.request('/pets?limit=100');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    const body = (await response.json()) as PetBody[];
    expect(Array.isArray(body)).toBe(true);
    expect(body).toHaveLength(TOTAL);
    for (const pet of body) expect(Object.keys(pet).every((key) => ['id', 'name', 'categoryId', 'status'].includes(key))).toBe(true);
  });

  it('lists newest first', async () => {
    const ids = ((await (await api.request('/pets?limit=100')).json()) as PetBody[]).map((pet) => pet.id);
    const apiCreated = created.map((pet) => pet.id);
    expect(ids.filter((id) => apiCreated.includes(id))).toEqual([...apiCreated].reverse());
    expect(ids).toEqual(await expectedOrder(api.documents));
  });

  it('breaks ties between pets created in the same millisecond by id', async () => {
    const ids = ((await (await api.request('/pets?limit=100')).json()) as PetBody[]).map((pet) => pet.id);
    const positions = tied.map((id) => ids.indexOf(id)).sort((a, b) => a - b);
    const run = ids.slice(positions[0], positions[0]! + tied.length);
    expect(positions.at(-1)! - positions[0]!, 'tied pets are listed together').toBe(tied.length - 1);
    expect(run).toEqual([...tied].sort((a, b) => b - a));
  });

  it('is stable: the same request lists the same pets in the same order', async () => {
    const first = await (await api.request('/pets?limit=100')).json();
    const second = await (await api.request('/pets?limit=100')).json();
    expect(second).toEqual(first);
  });

  it.each(PET_STATUSES)('filters by status=%s, newest first', async (status) => {
    const response = await api.request(`/pets?status=${status}&limit=100`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as PetBody[];
    expect(body.length).toBeGreaterThan(0);
    expect(body.every((pet) => pet.status === status)).toBe(true);
    expect(body.map((pet) => pet.id)).toEqual(await expectedOrder(api.documents, status));
  });

  it('keeps pets created without a status out of every status filter and leaves their status absent', async () => {
    const withoutStatus = created.filter((pet) => !('status' in pet));
    expect(withoutStatus.length).toBeGreaterThan(0);
    const all = (await (await api.request('/pets?limit=100')).json()) as PetBody[];
    for (const pet of withoutStatus) expect(all.find((listed) => listed.id === pet.id)).toEqual(pet);
    for (const status of PET_STATUSES) {
      const filtered = (await (await api.request(`/pets?status=${status}&limit=100`)).json()) as PetBody[];
      expect(filtered.some((listed) => withoutStatus.some((pet) => pet.id === listed.id))).toBe(false);
    }
  });
});

describe('GET /v1/pets: limit', () => {
  it('returns 20 pets by default', async () => {
    const response = await api.request('/pets');
    expect(((await response.json()) as unknown[]).length).toBe(20);
    expect(nextLink(response)?.searchParams.get('limit')).toBe('20');
  });

  it.each([1, 7, 20, 99, 100])('returns at most limit=%i pets', async (limit) => {
    const response = await api.request(`/pets?limit=${limit}`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as unknown[]).length).toBe(Math.min(limit, TOTAL));
  });

  it.each([
    ['0', 'limit=0'],
    ['101', 'limit=101'],
    ['-1', 'limit=-1'],
    ['abc', 'limit=abc'],
    ['1.5', 'limit=1.5'],
    ['empty', 'limit='],
    ['without a value', 'limit'],
    ['repeated (API Gateway joins it to "5,6")', 'limit=5&limit=6'],
    ['1e1', 'limit=1e1'],
    ['a space', 'limit=%205'],
    ['huge', 'limit=99999999999999999999'],
  ])('rejects the limit %s with 400 invalid_parameter', async (_, query) => {
    const body = await expectError(await api.request(`/pets?${query}`), 400, 'invalid_parameter');
    expect(body.message).toContain('limit');
  });
});

describe('GET /v1/pets: status', () => {
  it.each([
    ['unknown', 'status=unknown'],
    ['in capitals', 'status=AVAILABLE'],
    ['empty', 'status='],
    ['repeated', 'status=available&status=sold'],
    ['with spaces', 'status=%20available'],
  ])('rejects a status that is %s with 400 invalid_parameter', async (_, query) => {
    const body = await expectError(await api.request(`/pets?${query}`), 400, 'invalid_parameter');
    expect(body.message).toContain('status');
  });
});

describe('GET /v1/pets: unknown query parameters', () => {
  it.each(['foo', 'offset', 'page', 'Limit', 'STATUS', 'sort', 'id', 'constructor', 'toString', '__proto__'])(
    'rejects the unknown parameter %s with 400 invalid_parameter naming it',
    async (name) => {
      const body = await expectError(await api.request(`/pets?${name}=1`), 400, 'invalid_parameter');
      expect(body.message).toContain(name);
    },
  );

  it('names the unknown parameter even next to valid ones', async () => {
    const body = await expectError(await api.request('/pets?limit=5&status=sold&extra=yes'), 400, 'invalid_parameter');
    expect(body.message).toContain('extra');
  });
});

describe('GET /v1/pets: pagination', () => {
  it('links to the next page with an absolute RFC 8288 Link header', async () => {
    const response = await api.request('/pets?limit=5');
    expect(response.headers.get('link')).toMatch(
      new RegExp(`^<http://localhost:${api.port}/v1/pets\\?limit=5&cursor=[A-Za-z0-9._~%-]+>; rel="next"$`),
    );
    expect(((await response.json()) as unknown[]).length).toBe(5);
  });

  it('keeps the status filter in the next link', async () => {
    const response = await api.request('/pets?status=available&limit=2');
    expect(response.headers.get('link')).toMatch(
      new RegExp(`^<http://localhost:${api.port}/v1/pets\\?limit=2&status=available&cursor=[A-Za-z0-9._~%-]+>; rel="next"$`),
    );
  });

  it('has no Link header on the last page', async () => {
    const response = await api.request('/pets?limit=100');
    expect(response.headers.get('link')).toBeNull();
  });

  it('has no Link header when the last page is exactly full', async () => {
    const response = await api.request(`/pets?limit=${TOTAL}`);
    expect(((await response.json()) as unknown[]).length).toBe(TOTAL);
    expect(response.headers.get('link')).toBeNull();
  });

  it.each([1, 3, 5, 7, 28, 29])('walks every pet exactly once, in order, %i per page', async (limit) => {
    const walk = await walkPets(api, { limits: [limit] });
    expect(walk.pets.map((pet) => pet.id)).toEqual(await expectedOrder(api.documents));
    expect(walk.pages).toBe(Math.ceil(TOTAL / limit));
  });

  it.each(PET_STATUSES)('walks every %s pet exactly once, in order, 2 per page', async (status) => {
    const walk = await walkPets(api, { status, limits: [2] });
    const expected = await expectedOrder(api.documents, status);
    expect(walk.pets.map((pet) => pet.id)).toEqual(expected);
    expect(walk.pages).toBe(Math.ceil(expected.length / 2));
    for (const link of walk.links) expect(link.searchParams.get('status')).toBe(status);
  });

  it('allows changing the limit between pages', async () => {
    const walk = await walkPets(api, { limits: [3, 10, 1, 100] });
    expect(walk.pets.map((pet) => pet.id)).toEqual(await expectedOrder(api.documents));
    expect(walk.pages).toBe(4);
  });
});

describe('GET /v1/pets: cursors', () => {
  it('rejects a cursor with any single character changed with 400 invalid_cursor', async () => {
    const cursor = await firstPageCursor('limit=4');
    const accepted: string[] = [];
    for (let index = 0; index < cursor.length; index++) {
      const original = cursor[index]!;
      const replacement = original === '.' ? 'A' : BASE64URL[(BASE64URL.indexOf(original) + 1) % BASE64URL.length]!;
      const tampered = cursor.slice(0, index) + replacement + cursor.slice(index + 1);
      const response = await api.request(`/pets?limit=4&cursor=${encodeURIComponent(tampered)}`);
      if (response.status !== 400 || ((await response.json()) as { code: string }).code !== 'invalid_cursor') {
        accepted.push(`position ${index}/${cursor.length}: ${original}→${replacement} answered ${response.status}`);
      }
    }
    expect(accepted).toEqual([]);
  });

  it.each([
    ['with padding appended', (cursor: string) => `${cursor}=`],
    ['with a space appended', (cursor: string) => `${cursor} `],
    ['with a character appended', (cursor: string) => `${cursor}A`],
    ['truncated by one character', (cursor: string) => cursor.slice(0, -1)],
    ['without its signature', (cursor: string) => cursor.split('.')[0]!],
    ['with its signature doubled', (cursor: string) => `${cursor}.${cursor.split('.')[1]}`],
  ])('rejects a cursor %s with 400 invalid_cursor', async (_, tamper) => {
    const cursor = await firstPageCursor('limit=4');
    await expectError(await api.request(`/pets?limit=4&cursor=${encodeURIComponent(tamper(cursor))}`), 400, 'invalid_cursor');
  });

  it.each([
    ['garbage', 'garbage'],
    ['empty', ''],
    ['a lone dot', '.'],
    ['three parts', 'a.b.c'],
    ['unsigned JSON', Buffer.from('{"v":1,"s":"","i":1,"t":"2026-01-01T00:00:00.000Z"}').toString('base64url')],
    ['non-ASCII', 'ünïcödé.✓'],
    ['257 characters long', 'A'.repeat(257)],
    ['4000 characters long', 'x'.repeat(4000)],
  ])('rejects a cursor that is %s with 400 invalid_cursor', async (_, cursor) => {
    await expectError(await api.request(`/pets?cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_cursor');
  });

  it('rejects an over-long cursor made by padding a real one with 400 invalid_cursor', async () => {
    const cursor = await firstPageCursor('limit=4');
    await expectError(await api.request(`/pets?limit=4&cursor=${encodeURIComponent(cursor + 'A'.repeat(300))}`), 400, 'invalid_cursor');
  });

  it.each([
    ['status=available', 'status=sold'],
    ['status=available', ''],
    ['status=pending', 'status=available'],
    ['', 'status=available'],
    ['', 'status=sold'],
  ])('rejects a cursor issued for "%s" when used with "%s" with 400 invalid_cursor', async (issuedFor, usedWith) => {
    const cursor = await firstPageCursor(`limit=1${issuedFor ? `&${issuedFor}` : ''}`);
    const query = `limit=1${usedWith ? `&${usedWith}` : ''}&cursor=${encodeURIComponent(cursor)}`;
    await expectError(await api.request(`/pets?${query}`), 400, 'invalid_cursor');
  });

  it('rejects a cursor signed by another deployment with 400 invalid_cursor', async () => {
    const other = await startTestApi({ cursorSecret: 'another-deployment-secret-0123456789abcdef' });
    try {
      await other.createPet(newPet());
      await other.createPet(newPet());
      const response = await other.request('/pets?limit=1');
      const foreign = nextLink(response)!.searchParams.get('cursor')!;
      await expectError(await api.request(`/pets?limit=1&cursor=${encodeURIComponent(foreign)}`), 400, 'invalid_cursor');
    } finally {
      await other.close();
    }
  });
});

describe('GET /v1/pets: freshness', () => {
  let fresh: TestApi;
  beforeAll(async () => {
    fresh = await startTestApi();
  });
  afterAll(() => fresh?.close());

  async function listed(query: string): Promise<number[]> {
    const response = await fresh.request(`/pets${query}`);
    expect(response.status).toBe(200);
    return ((await response.json()) as PetBody[]).map(({ id }) => id);
  }

  it('lists at once the pets just answered 201 for: a listing, 26 creates, the listing again', async () => {
    expect(await listed('')).toEqual([]);
    const ids: number[] = [];
    for (let index = 0; index < 26; index++) {
      const response = await postPet(fresh, newPet({ status: 'available' }));
      expect(response.status).toBe(201);
      ids.push(((await response.json()) as PetBody).id);
    }
    const newestFirst = [...ids].reverse();
    expect(await listed('')).toEqual(newestFirst.slice(0, 20));
    expect(await listed('?status=available&limit=100')).toEqual(newestFirst);
  });

  it('shows each new pet first in the listing asked for right after its 201, with and without a filter, while others list as fast as they are answered', async () => {
    // Two clients asking for first pages back to back, far above 10 a second on any machine that serves
    // a request in under 100 ms: often enough that a first page kept in an instance's memory would be stale.
    let busy = true;
    const background = Array.from({ length: 2 }, async () => {
      let pages = 0;
      while (busy) {
        await listed(pages++ % 2 === 0 ? '?limit=10' : '?status=available&limit=10');
      }
      return pages;
    });
    try {
      for (let create = 0; create < 20; create++) {
        const response = await postPet(fresh, newPet({ status: 'available' }));
        expect(response.status).toBe(201);
        const { id } = (await response.json()) as PetBody;
        expect((await listed('?limit=10'))[0], `create ${create}, unfiltered`).toBe(id);
        expect((await listed('?status=available&limit=10'))[0], `create ${create}, by status`).toBe(id);
      }
    } finally {
      busy = false;
    }
    const pages = await Promise.all(background);
    expect(Math.min(...pages)).toBeGreaterThan(20);
  });
});
