import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../shared/facts/error-codes';

/** What no client-facing message may contain: stack frames, SDK and network error names, table names. */
const LEAK_PATTERNS: readonly RegExp[] = [
  /\bat .+:\d+:\d+/, // a stack frame
  /\n\s+at /,
  /Exception\b/,
  /\bE(?:CONNREFUSED|CONNRESET|TIMEDOUT|NOTFOUND|PIPE)\b/,
  /TimeoutError|StoreUnavailableError|AggregateError/,
  /animal-store-local/,
  /node_modules|\.ts:\d+|\.mjs/,
];

export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly status: number;
}

/**
 * Asserts that a response is one of our Error bodies: the given status and code, exactly the keys
 * `code`, `message`, `status`, `status` repeating the HTTP status, JSON content type, and a message
 * that leaks nothing internal. Returns the body for further checks.
 */
export async function expectError(response: Response, status: number, code: ErrorCode): Promise<ErrorBody> {
  const text = await response.text();
  expect({ status: response.status, body: text }).toMatchObject({ status });
  expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message', 'status']);
  expect(body).toMatchObject({ code, status });
  expect(ERROR_CODES[code]).toBe(status);
  expect(typeof body.message).toBe('string');
  expectNoLeak(body.message as string);
  return body as unknown as ErrorBody;
}

export function expectNoLeak(message: string): void {
  for (const pattern of LEAK_PATTERNS) expect(message, `message leaks ${pattern}`).not.toMatch(pattern);
}

/** `Link: <url>; rel="next"` → the URL, or undefined when there is no next link. */
export function nextLink(response: Response): URL | undefined {
  const header = response.headers.get('link');
  if (header === null) return undefined;
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(header);
  expect(match, `Link header ${header}`).not.toBeNull();
  return new URL(match![1]!);
}

/** A request outside fetch's rules: repeated header lines, raw paths, no automatic content type. */
export interface RawRequest {
  readonly method?: string;
  /** Path and query exactly as sent on the request line. */
  readonly target: string;
  /** Header lines in order; a name may repeat. */
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  readonly body?: string | Buffer;
}

export interface RawResponse {
  readonly status: number;
  /** Header values by lower-case name; repeated headers as arrays. */
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

/** Sends one request with node:http, so the request line and header lines are exactly as given. */
export function rawRequest(port: number, options: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: string[] = [];
    // With raw header lines node:http adds no Host header, which an HTTP/1.1 server requires.
    if (!(options.headers ?? []).some(([name]) => name.toLowerCase() === 'host')) headers.push('Host', `localhost:${port}`);
    for (const [name, value] of options.headers ?? []) headers.push(name, value);
    const body = options.body === undefined ? undefined : Buffer.from(options.body);
    if (body) headers.push('Content-Length', String(body.length));
    const req = httpRequest(
      { host: '127.0.0.1', port, method: options.method ?? 'GET', path: options.target, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A 503's (or a 409's) Retry-After: a whole number of seconds, at least one. */
export function expectRetryAfter(response: Response): void {
  expect(response.headers.get('retry-after')).toMatch(/^[1-9]\d*$/);
}

/** The answer `send` gets, and how long it took. */
export async function timed(send: () => Promise<Response>): Promise<{ response: Response; ms: number }> {
  const started = performance.now();
  const response = await send();
  return { response, ms: performance.now() - started };
}

/** A raw HTTP/1.1 createPet of a pet named `name`, with `apiKey`: for a test that writes requests on a connection itself. */
export function createPetRequest(apiKey: string, name: string): string {
  const body = JSON.stringify({ name, categoryId: 1 });
  return (
    `POST /v1/pets HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  );
}

/** Requests pipelined on the same connection some time after the first ones, whatever has been answered by then. */
export interface LaterRequests {
  readonly afterMs: number;
  readonly requests: readonly string[];
}

/**
 * Writes `requests` (raw HTTP/1.1, one after another) on one connection at once, without waiting for
 * any answer, then `later`'s, and reads back every answer in the order they arrive. Each answer must carry a
 * Content-Length (every answer of the local server does); an answer to HEAD carries none of its body.
 */
export function sendPipelined(port: number, requests: readonly string[], later?: LaterRequests): Promise<RawResponse[]> {
  const all = [...requests, ...(later?.requests ?? [])];
  const count = all.length;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(requests.join(''));
      if (later !== undefined) setTimeout(() => socket.destroyed || socket.write(later.requests.join('')), later.afterMs);
    });
    const heads = all.map((request) => request.slice(0, request.indexOf(' ')));
    const responses: RawResponse[] = [];
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      try {
        for (let next = readResponse(buffered, heads[responses.length] === 'HEAD'); next; ) {
          responses.push(next.response);
          buffered = buffered.subarray(next.length);
          if (responses.length === count) {
            socket.destroy();
            return resolve(responses);
          }
          next = readResponse(buffered, heads[responses.length] === 'HEAD');
        }
      } catch (error) {
        socket.destroy();
        reject(error);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed after ${responses.length} of ${count} answers`)));
    socket.setTimeout(30_000, () => socket.destroy());
  });
}

/** The first complete answer in `bytes` and how many bytes it took; undefined while it is incomplete. */
export function readResponse(bytes: Buffer, toHead: boolean): { response: RawResponse; length: number } | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end === -1) return undefined;
  const [statusLine = '', ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
  const bodyLength = toHead ? 0 : Number(headers['content-length'] ?? Number.NaN);
  if (!Number.isInteger(bodyLength)) throw new Error(`an answer without Content-Length: ${statusLine}`);
  if (bytes.length < end + 4 + bodyLength) return undefined;
  return {
    response: { status: Number(statusLine.split(' ')[1]), headers, body: bytes.subarray(end + 4, end + 4 + bodyLength) },
    length: end + 4 + bodyLength,
  };
}
