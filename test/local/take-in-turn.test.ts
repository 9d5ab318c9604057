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
  readonly port: number;
}

async function startHeldServer(): Promise<Held> {
  const started: string[] = [];
  const responses: ServerResponse[] = [];
  let arrived = 0;
  server = createServer(
    takeInTurn((req, res) => {
      started.push(req.url ?? '');
      responses.push(res);
    }),
  );
  server.on('request', () => arrived++);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return {
    started,
    arrived: () => arrived,
    answer: (index) => responses[index]!.end(started[index]),
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
  it(`close a connection that has ${MAX_WAITING_PER_CONNECTION} waiting when one more comes, without starting them, and serve others on`, async () => {
    const held = await startHeldServer();
    const total = 20 * MAX_WAITING_PER_CONNECTION;
    const requests = Array.from({ length: total }, (_, index) => GET(`/${index}`)).join('');
    const flood: Socket = connect(held.port, '127.0.0.1', () => flood.write(requests));
    flood.on('error', () => undefined);
    await new Promise((resolve) => flood.once('close', resolve));
    expect(held.started).toEqual(['/0']);
    // Node parses the rest of the read it was in: no more than that arrives after the bound.
    expect(held.arrived()).toBeLessThan(total);

    const other = sendPipelined(held.port, [GET('/other')]);
    await vi.waitFor(() => expect(held.started).toEqual(['/0', '/other']));
    held.answer(1);
    expect((await other)[0]!.body.toString()).toBe('/other');
  });

  it(`keep a connection with ${MAX_WAITING_PER_CONNECTION} waiting, and answer each in order`, async () => {
    const held = await startHeldServer();
    const total = MAX_WAITING_PER_CONNECTION + 1;
    const answers = sendPipelined(
      held.port,
      Array.from({ length: total }, (_, index) => GET(`/${index}`)),
    );
    for (let index = 0; index < total; index++) {
      await vi.waitFor(() => expect(held.started.length).toBeGreaterThan(index));
      held.answer(index);
    }
    expect((await answers).map((answer) => answer.body.toString())).toEqual(Array.from({ length: total }, (_, index) => `/${index}`));
  });
});
