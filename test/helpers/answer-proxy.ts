import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buffer } from 'node:stream/consumers';

/**
 * An HTTP proxy in front of the local API, for client tests: it breaks what a caller meets between it and API
 * Gateway (answers lost after the request ran, connections reset before it reached the API, API Gateway's own
 * 429), so a client's retries meet those faults on the network, as they do on the Internet.
 */

/** What the proxy does with one request. */
export type AnswerFault =
  /** Passes the request on and its answer back. */
  | 'forward'
  /** Passes the request on; once the API has answered in full (the request ran), drops the connection without the answer. */
  | 'lose-answer'
  /** Drops the connection without passing the request on: the API never saw it. */
  | 'reset'
  /** Never answers nor passes the request on, until the proxy closes. */
  | 'stall'
  /** Answers itself, as API Gateway does (its throttle's 429), without passing the request on. */
  | { readonly status: number; readonly headers?: Readonly<Record<string, string>>; readonly body: string };

/** One request as the proxy received it. */
export interface SeenRequest {
  readonly method: string;
  /** Path and query as sent. */
  readonly target: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  /** performance.now() when its body had arrived. */
  readonly at: number;
  readonly fault: AnswerFault;
}

export interface AnswerProxy {
  /** The API's base URL through the proxy (`http://127.0.0.1:<port>/v1`). */
  readonly baseUrl: string;
  readonly seen: readonly SeenRequest[];
  close(): Promise<void>;
}

/** API Gateway's answer when it throttles (its own body), with the `Retry-After` a test asks for. */
export function throttled(retryAfterSeconds: number): AnswerFault {
  return {
    status: 429,
    headers: { 'content-type': 'application/json', 'retry-after': String(retryAfterSeconds) },
    body: '{"message":"Too Many Requests"}',
  };
}

/** How the proxy treats a request, given the requests received before it. */
export type Decide = (request: Omit<SeenRequest, 'fault'>, before: readonly SeenRequest[]) => AnswerFault;

/** Starts a proxy to `apiBaseUrl` that treats each request as `decide` says, given the requests received before it. */
export async function startAnswerProxy(apiBaseUrl: string, decide: Decide = () => 'forward'): Promise<AnswerProxy> {
  const api = new URL(apiBaseUrl);
  const seen: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const body = (await buffer(req)).toString('utf8');
    const received = { method: req.method!, target: req.url!, headers: req.headers, body, at: performance.now() };
    const fault = decide(received, [...seen]);
    seen.push({ ...received, fault });
    if (fault === 'reset') return req.socket.destroy();
    if (fault === 'stall') return;
    if (typeof fault === 'object') return res.writeHead(fault.status, fault.headers).end(fault.body);
    const headers = { ...req.headers, host: api.host, connection: 'close' };
    const upstream = httpRequest({ host: api.hostname, port: api.port, method: req.method, path: req.url, headers }, async (answer) => {
      const answerBody = await buffer(answer);
      if (fault === 'lose-answer') return req.socket.destroy();
      const { connection: _connection, 'keep-alive': _keepAlive, 'transfer-encoding': _encoding, ...passed } = answer.headers;
      res.writeHead(answer.statusCode!, passed).end(answerBody);
    });
    upstream.on('error', () => req.socket.destroy());
    upstream.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}${api.pathname}`,
    seen,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
