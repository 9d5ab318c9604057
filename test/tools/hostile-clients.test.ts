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

const MiB = 1024 * 1024;

interface Exchange {
  /** Everything the server sent before the connection ended. */
  readonly received: string;
  /** Bytes of the body the client managed to write before the server closed. */
  readonly bodyBytesSent: number;
}

/**
 * Opens a raw connection, sends the head, then writes `body` chunks (until the server stops reading
 * or `abortAfter` bytes), and collects what comes back until the connection closes.
 */
function exchange(head: string, options: { body?: () => Buffer | undefined; abortAfter?: number } = {}): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let received = '';
    let bodyBytesSent = 0;
    const finish = () => resolve({ received, bodyBytesSent });
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', finish);
    socket.setTimeout(10_000, () => socket.destroy());
    socket.on('connect', () => {
      socket.write(head);
      const pump = () => {
        for (;;) {
          if (options.abortAfter !== undefined && bodyBytesSent >= options.abortAfter) return void socket.destroy();
          const chunk = options.body?.();
          if (chunk === undefined || socket.destroyed) return;
          bodyBytesSent += chunk.length;
          if (!socket.write(chunk)) return void socket.once('drain', pump);
        }
      };
      pump();
    });
  });
}

/** Chunks of `size` bytes, forever or until `total`. */
function chunks(size: number, total = Number.POSITIVE_INFINITY): () => Buffer | undefined {
  let sent = 0;
  const chunk = Buffer.alloc(size, 'a');
  return () => {
    if (sent >= total) return undefined;
    sent += size;
    return chunk;
  };
}

function statusOf(received: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]);
}

describe('npm start, facing hostile clients', () => {
  it('answers a body declared over 10 MiB with API Gateway\'s 413 before reading it', async () => {
    const declared = 11 * MiB;
    const result = await exchange(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: ${declared}\r\n\r\n`, {
      body: chunks(64 * 1024, declared),
    });
    expect(statusOf(result.received)).toBe(413);
    expect(result.received).toContain('{"message":"Request Entity Too Large"}');
  });

  it('answers a chunked body 413 as soon as it passes 10 MiB, and closes without reading the rest', async () => {
    const hunk = Buffer.alloc(64 * 1024, 'a');
    const frame = Buffer.concat([Buffer.from(`${hunk.length.toString(16)}\r\n`), hunk, Buffer.from('\r\n')]);
    let frames = 0;
    // Endless: only the server closing the connection ends this upload.
    const result = await exchange('POST /v1/nowhere HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n', {
      body: () => (frames++ < 4_000 ? frame : undefined),
    });
    expect(statusOf(result.received)).toBe(413);
    expect(result.bodyBytesSent).toBeLessThan(4_000 * frame.length);
  });

  it('drops an upload aborted half-way without answering or failing', async () => {
    const result = await exchange(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: ${MiB}\r\n\r\n`, {
      body: chunks(16 * 1024),
      abortAfter: 100 * 1024,
    });
    expect(result.received).toBe('');
  });

  it('survives a client that sends a whole request and hangs up before the answer', async () => {
    const sent = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET /v1/pets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.apiKey}\r\n\r\n`);
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    expect(sent).toBe(true);
    // Give the server the time to answer nobody before the next test looks at it.
    await new Promise((resolve) => setTimeout(resolve, 200));
  });

  it.each([
    ['a garbage request line', 400, 'HELLO THERE\r\n\r\n'],
    ['a header with invalid characters', 400, 'GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Bad\u0001: yes\r\n\r\n'],
    ['a header section over 16 KiB', 431, `GET /v1/pets HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20 * 1024)}\r\n\r\n`],
  ])('answers %s with %i and closes that connection only', async (_, status, request) => {
    const result = await exchange(request);
    expect(statusOf(result.received)).toBe(status);
  });

  it('survives fifty aborted uploads at once', async () => {
    await Promise.all(
      Array.from({ length: 50 }, () =>
        exchange(`POST /v1/pets HTTP/1.1\r\nHost: x\r\nContent-Length: ${MiB}\r\n\r\n`, { body: chunks(8 * 1024), abortAfter: 32 * 1024 }),
      ),
    );
  });

  it('is still running afterwards, with its pets and its key', async () => {
    const response = await fetch(`${server.baseUrl}/pets/${rex.id}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: rex.id, name: 'Rex' });
    expect(server.output()).not.toMatch(/TypeError|Unhandled|Could not start|node:internal/);
  });
});
