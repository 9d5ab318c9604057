import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type RunningServer } from '../helpers/cli';

/**
 * `npm start` as a user runs it, facing clients that misbehave at the HTTP and TCP level. Whatever
 * they send, the process keeps running and keeps its data: with the default in-memory store, a
 * crash would lose every pet and key.
 */
let server: RunningServer;
let port: number;
let rex: { id: number };

beforeAll(async () => {
  server = await startServerProcess();
  port = Number(new URL(server.baseUrl).port);
  const response = await fetch(`${server.baseUrl}/pets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Rex', categoryId: 1 }),
  });
  expect(response.status).toBe(201);
  rex = (await response.json()) as { id: number };
});
afterAll(() => server?.stop());

const KiB = 1024;
const MiB = 1024 * KiB;
/** Uploads that must never be answered or logged: the client leaves before its body is complete. */
const ABANDONED_PATH = '/v1/abandoned-upload';
const TOO_LARGE_BODY = '{"message":"Request Entity Too Large"}';

interface Exchange {
  /** Everything the server sent before the connection ended. */
  readonly received: string;
  /** Body bytes the client handed to its socket (it waits for 'drain', as a real uploader does). */
  readonly bodyBytesSent: number;
  /** Whether the server ended its side of the connection. */
  readonly serverEnded: boolean;
}

/**
 * One raw connection: sends `head`, then the body's chunks while the connection lasts, and collects
 * what comes back until the connection is gone. Half-open, so that the server ending its side does
 * not stop the upload: only the server stopping to read (or resetting) does.
 */
function exchange(head: string, body: Iterator<Buffer> = [].values()): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = '';
    let bodyBytesSent = 0;
    let bodyDone = false;
    let serverEnded = false;
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('end', () => {
      serverEnded = true;
      if (bodyDone) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve({ received, bodyBytesSent, serverEnded }));
    socket.setTimeout(10_000, () => socket.destroy());
    const pump = () => {
      for (let next = body.next(); !next.done; next = body.next()) {
        if (socket.destroyed) return;
        bodyBytesSent += next.value.length;
        if (!socket.write(next.value)) return void socket.once('drain', pump);
      }
      bodyDone = true;
      if (serverEnded) socket.end();
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

/** `total` bytes of chunked transfer coding, in 64 KiB chunks, never terminated. */
function* chunkedFrames(total: number): Iterator<Buffer> {
  const data = Buffer.alloc(64 * KiB, 'a');
  const frame = Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]);
  for (let sent = 0; sent < total; sent += data.length) yield frame;
}

/** Declares `declared` bytes, sends `sent` of them, waits until they are on the wire, then leaves. */
function abandonedUpload(declared: number, sent: number, leave: (socket: Socket) => void): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST ${ABANDONED_PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`);
      socket.write(Buffer.alloc(sent, 'a'), () => leave(socket));
    });
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
  });
}

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

function parseResponse(received: string): RawResponse {
  const [head = '', body = ''] = received.split('\r\n\r\n', 2);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1]), headers, body };
}

function expectGatewayTooLarge(received: string): void {
  const response = parseResponse(received);
  expect(response).toMatchObject({ status: 413, body: TOO_LARGE_BODY });
  expect(response.headers['content-type']).toBe('application/json');
  expect(response.headers.connection).toBe('close');
}

/** The access-log lines the server printed so far. */
function accessLog(): Array<{ path: string; status: number }> {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{"requestId"'))
    .map((line) => JSON.parse(line) as { path: string; status: number });
}

describe('npm start, facing hostile clients', () => {
  it('answers a body declared over 10 MiB with 413 before reading it', async () => {
    const result = await exchange(
      `POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${11 * MiB}\r\n\r\n`,
      [Buffer.from('{"na')].values(),
    );
    // Four bytes of the 11 MiB were sent: the answer came from the declared length alone.
    expect(result.bodyBytesSent).toBe(4);
    expectGatewayTooLarge(result.received);
    expect(result.serverEnded).toBe(true);
  });

  it('answers HEAD with a body declared over 10 MiB with the same 413, head only', async () => {
    const result = await exchange(
      `HEAD /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${11 * MiB}\r\n\r\n`,
      [Buffer.from('{"na')].values(),
    );
    const response = parseResponse(result.received);
    expect(response).toMatchObject({ status: 413, body: '' });
    expect(response.headers).toMatchObject({ 'content-type': 'application/json', connection: 'close' });
    // A HEAD answer's Content-Length is the one GET would have had (RFC 9110 §9.3.2).
    expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(TOO_LARGE_BODY));
    expect(result.serverEnded).toBe(true);
  });

  it('answers a chunked body 413 once it passes 10 MiB, and closes the connection without reading the rest', async () => {
    const offered = 256 * MiB;
    const result = await exchange('POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', chunkedFrames(offered));
    expectGatewayTooLarge(result.received);
    expect(result.serverEnded).toBe(true);
    // The server stopped reading: beyond the limit, only what the TCP buffers took in got sent.
    expect(result.bodyBytesSent).toBeGreaterThan(10 * MiB);
    expect(result.bodyBytesSent).toBeLessThan(offered / 2);
  });

  it('drops an upload aborted half-way without answering it', async () => {
    await abandonedUpload(MiB, 100 * KiB, (socket) => socket.destroy());
  });

  it.each([
    ['closes the connection', (socket: Socket) => socket.destroy()],
    ['resets the connection', (socket: Socket) => socket.resetAndDestroy()],
  ])('survives a client that sends a whole request and %s before the answer', async (_, leave) => {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.apiKey}\r\n\r\n`, () => leave(socket));
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
  });

  it.each([
    ['a garbage request line', 400, 'HELLO THERE\r\n\r\n'],
    ['a header with invalid characters', 400, 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Bad\u0001: yes\r\n\r\n'],
    ['a header section over 16 KiB', 431, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20 * KiB)}\r\n\r\n`],
  ])('answers %s with %i and closes that connection', async (_, status, request) => {
    const result = await exchange(request);
    expect(parseResponse(result.received).status).toBe(status);
    expect(result.serverEnded).toBe(true);
  });

  it('survives fifty uploads aborted at once', async () => {
    await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        abandonedUpload(MiB, 32 * KiB, (socket) => (index % 2 === 0 ? socket.destroy() : socket.resetAndDestroy())),
      ),
    );
  });

  it('keeps open a connection that pipelines 100,000 requests and never reads them, and answers another client throughout', async () => {
    // "Answered" is within a few seconds, however far ahead the flood is.
    const getRex = () =>
      fetch(`${server.baseUrl}/pets/${rex.id}`, {
        headers: { authorization: `Bearer ${server.apiKey}` },
        signal: AbortSignal.timeout(5_000),
      });
    // getPet's first call bundles and cold-starts it: a wait of its own, before the flood.
    expect((await getRex()).status).toBe(200);
    const request = `GET /v1/pets/${rex.id} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${server.apiKey}\r\n\r\n`;
    const flood: Socket = connect({ port, host: '127.0.0.1' }, () => flood.write(request.repeat(100_000)));
    flood.on('error', () => undefined);
    flood.pause();
    let closed = false;
    flood.once('close', () => (closed = true));

    const answered: number[] = [];
    for (let call = 0; call < 20; call++) {
      answered.push((await getRex()).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(answered).toEqual(Array(20).fill(200));
    // Still open: once the client reads, its answers are there.
    expect(closed).toBe(false);
    const first = new Promise<string>((resolve) => flood.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1'))));
    flood.resume();
    expect(await first).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    flood.destroy();
  });

  it('is still running afterwards, with its pets and its key, and logged no abandoned request', async () => {
    const response = await fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toContainEqual(expect.objectContaining({ id: rex.id, name: 'Rex' }));
    expect(server.output()).not.toMatch(/TypeError|Unhandled|uncaught|Could not start|node:internal/i);

    const log = accessLog();
    expect(log.filter((line) => line.status === 413)).toHaveLength(3);
    expect(log.filter((line) => line.path === ABANDONED_PATH)).toEqual([]);
  });
});
