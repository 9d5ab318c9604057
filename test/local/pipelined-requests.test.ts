import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { createPetRequest, type LaterRequests, sendPipelined } from '../helpers/http';
import { storedPets } from '../helpers/pets';
import { MAX_WAITING_PER_CONNECTION } from '../../local/take-in-turn';

/**
 * HTTP/1.1 pipelining (RFC 9112 §9.3.2): a client may send its next request before the previous
 * answer. The local server answers in order, and takes each request only once the one before it on
 * the same connection has been answered, so what a pipelined request sees is what it would have seen
 * sent after that answer.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

const PAIRS = 20;

/** A raw create, with the API's key. */
const createRequest = (name: string) => createPetRequest(api.apiKey, name);

/**
 * A listing of its own limit: pipelined listings come faster than HOT_HEAD_PAGES_PER_SECOND, and the
 * same first page asked for that often may be a second old (docs/contract-decisions.md); each of these
 * is another first page, read from the index.
 */
function listRequest(limit: number): string {
  return `GET /v1/pets?limit=${limit} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${api.apiKey}\r\n\r\n`;
}

describe('pipelined requests on one connection', () => {
  it('are answered in order, and a listing pipelined after a create sees the pet it created', async () => {
    const names = Array.from({ length: PAIRS }, (_, index) => `Pipelined ${index}`);
    const answers = await sendPipelined(
      api.port,
      names.flatMap((name, index) => [createRequest(name), listRequest(100 - index)]),
    );

    const created = answers
      .filter((_, index) => index % 2 === 0)
      .map((answer) => ({ status: answer.status, ...JSON.parse(answer.body.toString()) }));
    expect(created).toEqual(names.map((name) => expect.objectContaining({ status: 201, name })));
    const listed = answers
      .filter((_, index) => index % 2 === 1)
      .map((answer) => ({
        status: answer.status,
        names: (JSON.parse(answer.body.toString()) as Array<{ name: string }>).map((pet) => pet.name).sort(),
      }));
    // The n-th listing holds exactly the n pets created before it: not one fewer, not one of the next.
    expect(listed).toEqual(names.map((_, index) => ({ status: 200, names: names.slice(0, index + 1).sort() })));

    expect((await storedPets(api.documents)).map((pet) => pet.name).sort()).toEqual([...names].sort());
  });

  it.each([
    ['300 in one write', 300, 0],
    ['200, then 100 more 150 ms later', 200, 100],
  ])(
    `are all answered past the bound of ${MAX_WAITING_PER_CONNECTION} waiting: %s, each 201 in order, storing exactly those pets`,
    async (label, first, more) => {
      const names = Array.from({ length: first + more }, (_, index) => `${label} ${index}`);
      const later: LaterRequests | undefined = more > 0 ? { afterMs: 150, requests: names.slice(first).map(createRequest) } : undefined;
      const storedBefore = new Set((await storedPets(api.documents)).map((pet) => pet.id));

      const answers = await sendPipelined(api.port, names.slice(0, first).map(createRequest), later);

      const created = answers.map(
        (answer) => ({ status: answer.status, ...JSON.parse(answer.body.toString()) }) as { status: number; id: number; name: string },
      );
      expect(created).toEqual(names.map((name) => expect.objectContaining({ status: 201, name })));
      const stored = (await storedPets(api.documents)).filter((pet) => !storedBefore.has(pet.id));
      expect(stored.map(({ id, name }) => ({ id, name })).sort((a, b) => a.id - b.id)).toEqual(
        created.map(({ id, name }) => ({ id, name })).sort((a, b) => a.id - b.id),
      );
    },
  );
});
