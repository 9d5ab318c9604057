import { createServer, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_WAITING_PER_CONNECTION, takeInTurn } from '../../local/take-in-turn';
import { sendPipelined } from '../helpers/http';

/**
 * The per-connection turns on their own, in front of a listener that answers only when the test
 * says so: what runs when, whatever the handlers' timing.
 */
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

interface Held {
  /** The targets whose handling has started, in order. */
  readonly started: string[];
  /** How many requests Node has handed over, taken or not. */
  arrived(): number;
  /** Answers the request whose handling started `index`-th. */
  answer(index: number): void;
  /** Answers every request started so far, and each later one as it starts. */
  answerEvery(): void;
  /** The most requests that were ever handed over and not yet taken. */
  mostWaiting(): number;
  readonly port: number;
}

async function startHeldServer(): Promise<Held> {
  const started: string[] = [];
  const responses: ServerResponse[] = [];
  let arrived = 0;
  let mostWaiting = 0;
  let answering = false;
  server = createServer(
    takeInTurn((req, res) => {
      started.push(req.url ?? '');
      responses.push(res);
      if (answering) res.end(req.url);
    }).listener,
  );
  server.on('request', () => {
    arrived++;
    mostWaiting = Math.max(mostWaiting, arrived - started.length);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    started,
    arrived: () => arrived,
    answer: (index) => responses[index]!.end(started[index]),
    answerEvery() {
      answering = true;
      for (const [index, res] of responses.entries()) if (!res.writableEnded) res.end(started[index]);
    },
    mostWaiting: () => mostWaiting,
    port: (server.address() as AddressInfo).port,
  };
}

const GET = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`;

describe('requests pipelined on one connection', () => {
  it('are taken one at a time: the next once the answer before it is complete', async () => {
    const held = await startHeldServer();
    const answers = sendPipelined(held.port, [GET('/a'), GET('/b'), GET('/c')]);
    await vi.waitFor(() => expect(held.arrived()).toBe(3));
    expect(held.started).toEqual(['/a']);

    held.answer(0);
    await vi.waitFor(() => expect(held.started).toEqual(['/a', '/b']));
    held.answer(1);
    await vi.waitFor(() => expect(held.started).toEqual(['/a', '/b', '/c']));
    held.answer(2);
    expect((await answers).map((answer) => answer.body.toString())).toEqual(['/a', '/b', '/c']);
  });

  it('do not wait for the requests of another connection', async () => {
    const held = await startHeldServer();
    const first = connect(held.port, '127.0.0.1', () => first.write(GET('/first')));
    await vi.waitFor(() => expect(held.started).toEqual(['/first']));
    const other = sendPipelined(held.port, [GET('/other')]);
    await vi.waitFor(() => expect(held.started).toEqual(['/first', '/other']));
    held.answer(1);
    expect((await other)[0]!.body.toString()).toBe('/other');
    first.destroy();
  });

  it('are dropped unhandled when their connection goes before their turn', async () => {
    const held = await startHeldServer();
    const client: Socket = connect(held.port, '127.0.0.1', () => client.write(GET('/a') + GET('/b') + GET('/c')));
    client.on('error', () => undefined);
    await vi.waitFor(() => expect(held.arrived()).toBe(3));
    client.destroy();
    // The server's side closes in one go: had a waiting request been started then, it would be by now.
    await vi.waitFor(async () => expect(await new Promise((resolve) => server!.getConnections((_, count) => resolve(count)))).toBe(0));
    expect(held.started).toEqual(['/a']);
  });
  it(`stop reading a connection with ${MAX_WAITING_PER_CONNECTION} waiting, keep it open, and serve others meanwhile`, async () => {
    const held = await startHeldServer();
    const total = 20 * MAX_WAITING_PER_CONNECTION;
    const requests = Array.from({ length: total }, (_, index) => GET(`/${index}`)).join('');
    // A client that pipelines far ahead and never reads an answer.
    const flood: Socket = connect(held.port, '127.0.0.1', () => flood.write(requests));
    flood.on('error', () => undefined);
    flood.pause();
    await vi.waitFor(() => expect(held.arrived()).toBeGreaterThan(MAX_WAITING_PER_CONNECTION));
    // A server still reading would have taken every request in by now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(held.arrived()).toBeLessThanOrEqual(MAX_WAITING_PER_CONNECTION + 1 + requestsInOneRead(GET('/0')));
    expect(held.started).toEqual(['/0']);

    const other = sendPipelined(held.port, [GET('/other')]);
    await vi.waitFor(() => expect(held.started).toEqual(['/0', '/other']));
    held.answer(1);
    expect((await other)[0]!.body.toString()).toBe('/other');

    // Still open: once the client reads, its first answer is there.
    let received = '';
    flood.on('data', (chunk: Buffer) => (received += chunk.toString()));
    held.answer(0);
    flood.resume();
    await vi.waitFor(() => expect(received).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\/0$/));
    flood.destroy();
  });

  it(`answer every request, in order, of a connection that pipelines ${20 * MAX_WAITING_PER_CONNECTION} at once, reading on as answers make room`, async () => {
    const held = await startHeldServer();
    const total = 20 * MAX_WAITING_PER_CONNECTION;
    const answers = sendPipelined(
      held.port,
      Array.from({ length: total }, (_, index) => GET(`/${index}`)),
    );
    await vi.waitFor(() => expect(held.arrived()).toBeGreaterThan(MAX_WAITING_PER_CONNECTION));
    held.answerEvery();
    expect((await answers).map((answer) => answer.body.toString())).toEqual(Array.from({ length: total }, (_, index) => `/${index}`));
    // Read as answers made room: never more waiting than the bound and the rest of one read.
    expect(held.mostWaiting()).toBeGreaterThanOrEqual(MAX_WAITING_PER_CONNECTION);
    expect(held.mostWaiting()).toBeLessThanOrEqual(MAX_WAITING_PER_CONNECTION + requestsInOneRead(GET('/0')));
  });

  it('hold the bound against a client that reads its answers slowly, though Node resumes reading as they drain', async () => {
    let arrived = 0;
    let taken = 0;
    let mostWaiting = 0;
    const answer = Buffer.alloc(16 * 1024, 'a');
    server = createServer(
      takeInTurn((_, res) => {
        taken++;
        res.end(answer);
      }).listener,
    );
    server.on('request', () => {
      arrived++;
      mostWaiting = Math.max(mostWaiting, arrived - taken);
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const total = 10 * MAX_WAITING_PER_CONNECTION;
    const requests = Array.from({ length: total }, (_, index) => GET(`/${index}`)).join('');
    const client: Socket = connect((server.address() as AddressInfo).port, '127.0.0.1', () => client.write(requests));
    let received = 0;
    await new Promise<void>((resolve) => {
      client.on('data', (chunk: Buffer) => {
        received += chunk.length;
        // Every request taken and nearly every answer in: the run is over.
        if (taken === total && received >= total * answer.length) return resolve();
        client.pause();
        setTimeout(() => client.resume(), 1);
      });
    });
    client.destroy();
    expect(mostWaiting).toBeLessThanOrEqual(MAX_WAITING_PER_CONNECTION + requestsInOneRead(GET('/0')));
  });
});

/** Node's HTTP parser reads a connection 64 KiB at a time: at most this many of `request` (or longer) in one read. */
function requestsInOneRead(request: string): number {
  return Math.ceil((64 * 1024) / Buffer.byteLength(request));
}
