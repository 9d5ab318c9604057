import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A fault-injecting proxy for DynamoDB, for tests: it sits on loopback between the functions and
 * dynalite and breaks the network the way production does, so faults are injected where the SDK
 * meets them, never by mocking the store. HTTP-aware (DynamoDB's JSON protocol: `X-Amz-Target` names
 * the operation, the body names the table), so a fault can aim at one operation on one table.
 */

export type Fault =
  /** Forward the request; once DynamoDB has answered (the write happened), drop the connection without the answer. */
  | 'lose-response'
  /** Drop the connection without forwarding: the request never reached DynamoDB. */
  | 'drop-request'
  /** Accept the request and never answer nor forward it, until `clear()` or `close()`. */
  | 'stall'
  /** Answer as DynamoDB does when throttling, without forwarding. */
  | 'throttle';

export interface FaultRule {
  readonly fault: Fault;
  /** DynamoDB operation, e.g. 'PutItem'; any operation when omitted. */
  readonly operation?: string;
  /** TableName of the request; any table when omitted. */
  readonly table?: string;
  /** The rule applies to this many matching requests, then lapses; to every matching request when omitted. */
  readonly times?: number;
  /** Applies only to every n-th matching request (1 = each), for steady fault rates. */
  readonly every?: number;
}

export interface ProxiedRequest {
  readonly operation: string;
  readonly table?: string;
  readonly fault?: Fault;
}

export interface FaultProxy {
  /** http://127.0.0.1:<port>; stays the same across refuse/accept. */
  readonly endpoint: string;
  /** Adds a rule; the first matching rule that still applies decides a request's fault. */
  inject(rule: FaultRule): void;
  /** Removes every rule and ends every stalled request (their connections are destroyed). */
  clear(): void;
  /** Stops listening and drops open connections, so new ones are refused (ECONNREFUSED): DynamoDB's endpoint is down. */
  refuseConnections(): Promise<void>;
  /** Listens again on the same port: the store comes back. */
  acceptConnections(): Promise<void>;
  /** Every request the proxy received, in order, with the fault applied to it. */
  readonly requests: readonly ProxiedRequest[];
  close(): Promise<void>;
}

interface ActiveRule extends FaultRule {
  matched: number;
  applied: number;
}

const THROTTLE_BODY = JSON.stringify({
  __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
  message: 'The level of configured provisioned throughput for the table was exceeded.',
});

export async function startFaultProxy(upstreamEndpoint: string): Promise<FaultProxy> {
  const upstream = new URL(upstreamEndpoint);
  let rules: ActiveRule[] = [];
  const requests: ProxiedRequest[] = [];
  const sockets = new Set<Socket>();
  const stalled = new Set<ServerResponse>();
  let server: Server | undefined;
  let port = 0;

  function decide(operation: string, table: string | undefined): Fault | undefined {
    for (const rule of rules) {
      if (rule.operation !== undefined && rule.operation !== operation) continue;
      if (rule.table !== undefined && rule.table !== table) continue;
      if (rule.times !== undefined && rule.applied >= rule.times) continue;
      rule.matched++;
      if (rule.every !== undefined && rule.matched % rule.every !== 0) continue;
      rule.applied++;
      return rule.fault;
    }
    return undefined;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = String(req.headers['x-amz-target'] ?? '').split('.').pop() ?? '';
    const table = tableOf(body);
    const fault = decide(operation, table);
    requests.push({ operation, ...(table === undefined ? {} : { table }), ...(fault === undefined ? {} : { fault }) });

    switch (fault) {
      case 'drop-request':
        req.socket.destroy();
        return;
      case 'stall':
        stalled.add(res);
        res.on('close', () => stalled.delete(res));
        return;
      case 'throttle':
        res.writeHead(400, {
          'content-type': 'application/x-amz-json-1.0',
          'content-length': Buffer.byteLength(THROTTLE_BODY),
          'x-amzn-requestid': `fault-proxy-${requests.length}`,
        });
        res.end(THROTTLE_BODY);
        return;
      default: {
        const answer = await forward(req, body);
        if (fault === 'lose-response') {
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body);
      }
    }
  }

  function forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: req.headers,
          agent: false,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: answer.headers as Record<string, string | string[]>,
              body: Buffer.concat(chunks),
            }),
          );
          answer.on('error', reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  async function listen(): Promise<void> {
    const next = createServer((req, res) => {
      handle(req, res).catch(() => req.socket.destroy());
    });
    next.on('connection', (socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => sockets.delete(socket));
    });
    // The same port every time: the SDK keeps the endpoint it was given. Right after a close, the
    // port may briefly still be held; try a few times.
    for (let attempt = 0; ; attempt++) {
      try {
        await new Promise<void>((resolve, reject) => {
          next.once('error', reject);
          next.listen(port, '127.0.0.1', () => {
            next.off('error', reject);
            resolve();
          });
        });
        break;
      } catch (error) {
        if (attempt >= 20 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    port = (next.address() as AddressInfo).port;
    server = next;
  }

  async function stopListening(): Promise<void> {
    const current = server;
    server = undefined;
    if (current === undefined) return;
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => current.close(resolve));
  }

  await listen();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject(rule) {
      rules.push({ ...rule, matched: 0, applied: 0 });
    },
    clear() {
      rules = [];
      for (const response of stalled) response.socket?.destroy();
      stalled.clear();
    },
    refuseConnections: stopListening,
    async acceptConnections() {
      if (server === undefined) await listen();
    },
    requests,
    async close() {
      rules = [];
      stalled.clear();
      await stopListening();
    },
  };
}

function tableOf(body: Buffer): string | undefined {
  try {
    const { TableName } = JSON.parse(body.toString('utf8')) as { TableName?: unknown };
    return typeof TableName === 'string' ? TableName : undefined;
  } catch {
    return undefined;
  }
}
