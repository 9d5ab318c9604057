import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { expect } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../src/facts/error-codes';

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

/** A loopback port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
