import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_WAITING_PER_CONNECTION } from '../../local/take-in-turn';
import { createPetRequest, readResponse } from '../helpers/http';
import { startFaultyApi, type FaultyApi } from '../helpers/local-api';
import { storedPets } from '../helpers/pets';

/**
 * How long a client has to send a request (Node's headersTimeout and requestTimeout, shortened here
 * through `clientAllowance`), against a store the fault proxy slows at the network. The time the server
 * holds a request, answering the ones before it or not reading while too many wait, is not the client's:
 * every request read is answered, and a refusal never stands in for a request that ran. A client that
 * holds back its own request is still refused.
 */
const ALLOWANCE = { headersMs: 150, requestMs: 300 };
/** Node checks its connections every headersMs / 2 (local/local-api.ts): a timeout is told at most this late. */
const CHECK_MS = ALLOWANCE.headersMs / 2;
/** Room for a loaded machine in the upper bounds. */
const SLACK_MS = 1_000;
/** How often a trickling client writes its next byte. */
const TRICKLE_MS = 25;

let faulty: FaultyApi;
beforeAll(async () => {
  faulty = await startFaultyApi({ clientAllowance: ALLOWANCE });
  // Cold-starts createPet and the authorizer, whose verdict on the key is then cached: the store's
  // delays meet the creates only.
  await faulty.api.createPet({ name: 'Warm-up', categoryId: 1 });
});
afterEach(() => faulty.proxy.clear());
afterAll(() => faulty?.close());

/** A raw create, with the API's key: what these connections send. */
const createRequest = (name: string) => createPetRequest(faulty.api.apiKey, name);

/** Where to cut a request: inside its headers, or inside its body. */
const CUTS = [
  ['its headers', (request: string) => request.indexOf('\r\n') + 2],
  ['its body', (request: string) => request.length - 5],
] as const;

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
  /** performance.now() when it was whole. */
  readonly at: number;
}

interface Conversation {
  readonly answers: readonly Answer[];
  /** performance.now() when the first bytes were written. */
  readonly sentAt: number;
  /** The server ended or reset the connection; the client did not give up on it. */
  readonly serverClosed: boolean;
}

/**
 * One connection: writes `first`, then `rest` once the first answer has come (so the server has read
 * everything in `first`), or drips `trickle` a byte every TRICKLE_MS. Collects the answers, with when each
 * came, until there are `answers` of them, or else until the server closes the connection.
 */
function converse(first: string, options: { answers?: number; rest?: string; trickle?: string } = {}): Promise<Conversation> {
  return new Promise((resolve) => {
    const answers: Answer[] = [];
    let sentAt = 0;
    let clientClosed = false;
    let buffered = Buffer.alloc(0);
    let dripped = 0;
    let drip: NodeJS.Timeout | undefined;
    const socket: Socket = connect(faulty.api.port, '127.0.0.1', () => {
      sentAt = performance.now();
      socket.write(first);
      if (options.trickle !== undefined) {
        const trickle = options.trickle;
        drip = setInterval(() => dripped < trickle.length && socket.write(trickle[dripped++]!), TRICKLE_MS);
      }
    });
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (let next = readResponse(buffered, false); next; next = readResponse(buffered, false)) {
        answers.push({ status: next.response.status, body: JSON.parse(next.response.body.toString()), at: performance.now() });
        buffered = buffered.subarray(next.length);
        if (answers.length === 1 && options.rest !== undefined) socket.write(options.rest);
      }
      if (answers.length === options.answers) giveUp();
    });
    const giveUp = () => {
      clientClosed = true;
      socket.destroy();
    };
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(drip);
      resolve({ answers, sentAt, serverClosed: !clientClosed });
    });
    socket.setTimeout(30_000, giveUp);
  });
}

/** The ids of the pets stored under names starting with `prefix`, read from dynalite behind the proxy's back. */
async function storedIds(prefix: string): Promise<number[]> {
  const pets = await storedPets(faulty.tables);
  return pets
    .filter((pet) => pet.name.startsWith(prefix))
    .map((pet) => pet.id)
    .sort((a, b) => a - b);
}

describe('a connection the server holds', () => {
  it.each(CUTS)(
    `has every request answered, in order, past ${MAX_WAITING_PER_CONNECTION} waiting, the one cut in %s included, though the server held it past the allowance; exactly those pets are stored`,
    async (part, cutAt) => {
      // Slow enough at first that the server, working through the requests, reads nothing for a second or more.
      faulty.proxy.inject({ fault: 'delay', delayMs: [20, 40], times: 60 });
      const prefix = `Cut in ${part} `;
      const names = Array.from({ length: MAX_WAITING_PER_CONNECTION + 45 }, (_, index) => `${prefix}${index}`);
      const requests = names.map(createRequest);
      const cut = requests.at(-1)!;

      const conversation = await converse(requests.slice(0, -1).join('') + cut.slice(0, cutAt(cut)), {
        rest: cut.slice(cutAt(cut)),
        answers: names.length,
      });

      expect(conversation.answers.map(({ status, body }) => ({ status, name: body.name }))).toEqual(
        names.map((name) => ({ status: 201, name })),
      );
      // Its first bytes came with the others; Node's clock on it ran out while the server was not reading.
      expect(conversation.answers.at(-1)!.at - conversation.sentAt).toBeGreaterThan(ALLOWANCE.requestMs + CHECK_MS);
      expect(await storedIds(prefix)).toEqual(conversation.answers.map(({ body }) => body.id as number).sort((a, b) => a - b));
    },
  );
});

describe('a client that holds back its own request', () => {
  it('trickling its headers without end, is answered 408 within its allowance, and the connection is closed', async () => {
    const conversation = await converse('', {
      trickle: `GET /v1/pets HTTP/1.1\r\nHost: localhost\r\nX-Slow: ${'a'.repeat(200)}`,
    });

    expect(conversation.answers.map(({ status, body }) => ({ status, body }))).toEqual([
      { status: 408, body: { message: 'Request Timeout' } },
    ]);
    const waited = conversation.answers[0]!.at - conversation.sentAt;
    expect(waited).toBeGreaterThan(ALLOWANCE.headersMs);
    expect(waited).toBeLessThan(ALLOWANCE.headersMs + CHECK_MS + SLACK_MS);
    expect(conversation.serverClosed).toBe(true);
  });

  it.each(CUTS)(
    'stalling in %s behind a create the store is slow on, is answered 408 only after that create’s 201, its allowance counted from its turn; the create is stored, the stalled one not',
    async (part, cutAt) => {
      // Each create outlasts Node's clock on the request behind it.
      faulty.proxy.inject({ fault: 'delay', delayMs: [ALLOWANCE.requestMs + 100, ALLOWANCE.requestMs + 200] });
      const prefix = `Stalled in ${part} `;
      const stalled = createRequest(`${prefix}second`);

      const conversation = await converse(createRequest(`${prefix}first`) + stalled.slice(0, cutAt(stalled)));

      expect(conversation.answers.map(({ status, body }) => ({ status, body: body.name ?? body }))).toEqual([
        { status: 201, body: `${prefix}first` },
        { status: 408, body: { message: 'Request Timeout' } },
      ]);
      const allowed = part === 'its headers' ? ALLOWANCE.headersMs : ALLOWANCE.requestMs;
      const [created, refused] = conversation.answers;
      expect(refused!.at - created!.at).toBeGreaterThan(allowed * 0.9);
      expect(refused!.at - created!.at).toBeLessThan(allowed + SLACK_MS);
      expect(conversation.serverClosed).toBe(true);
      expect(await storedIds(prefix)).toEqual([created!.body.id]);
    },
  );

  it('sending a malformed request behind a create the store is slow on, is answered 400 after that create’s 201; the create is stored', async () => {
    faulty.proxy.inject({ fault: 'delay', delayMs: [ALLOWANCE.requestMs + 100, ALLOWANCE.requestMs + 200] });
    const prefix = 'Before garbage ';

    const conversation = await converse(`${createRequest(`${prefix}first`)}HELLO THERE\r\n\r\n`);

    expect(conversation.answers.map(({ status, body }) => ({ status, body: body.name ?? body }))).toEqual([
      { status: 201, body: `${prefix}first` },
      { status: 400, body: { message: 'Bad Request' } },
    ]);
    expect(conversation.serverClosed).toBe(true);
    expect(await storedIds(prefix)).toEqual([conversation.answers[0]!.body.id]);
  });
});
