import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import {
  Agent,
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { finished, pipeline } from 'node:stream';
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { createLocalClient } from '../../local/dynamodb-local';
import {
  partitionLimiter,
  tableKeys,
  type PartitionLimiter,
  type PartitionLimits,
  type PartitionOf,
  type PartitionThrottles,
  type TableKeys,
} from './partition-limiter';

export type { PartitionLimits, PartitionOf, PartitionThrottles } from './partition-limiter';

/**
 * A fault-injecting proxy for DynamoDB, for tests. It sits on loopback between the functions and
 * dynalite and breaks the network the way production does, so faults are met where the AWS SDK meets
 * them, never by mocking the store. It speaks HTTP rather than relaying bytes because DynamoDB's JSON
 * protocol names the operation in `X-Amz-Target` and the table in the body's `TableName`: that is
 * what lets a fault aim at one operation on one table while every other request passes unchanged.
 *
 * Opt-in, `limitPartitions` emulates DynamoDB's per-partition throughput (write and read units per second
 * per partition-key value, per table and per index), scaled down so a local API on a small machine can
 * exceed it, and answers `ThrottlingException` as DynamoDB does; dynalite itself never throttles.
 */

/** What the proxy does to a request that a rule selects. */
export type Fault =
  /** Forward the request; once DynamoDB has answered (the write happened), drop the client's connection without the answer. */
  | 'lose-response'
  /** Drop the client's connection without forwarding: the request never reached DynamoDB. */
  | 'drop-request'
  /** Accept the request and never answer nor forward it, until `clear()` or `close()` (or the client gives up). */
  | 'stall'
  /** Answer as DynamoDB does when throttling (HTTP 400, ProvisionedThroughputExceededException), without forwarding. */
  | 'throttle'
  /** Forward the request; pass DynamoDB's status and headers on, then never the body, until `clear()` or `close()` (or the client gives up). */
  | 'stall-body'
  /** Forward the request; pass DynamoDB's status and headers on, then its body one byte at a time, `DRIP_INTERVAL_MS` apart. */
  | 'drip-body'
  /** Forward the request; answer 200 with a body that is not JSON, as a broken intermediary might. */
  | 'non-json-body'
  /** Forward the request after a wait drawn evenly from the rule's `delayMs`: a slow store that answers. */
  | 'delay';

/** The faults that let the request through to DynamoDB and break its answer. */
type AnswerFault = Extract<Fault, 'lose-response' | 'stall-body' | 'drip-body' | 'non-json-body'>;

/** Which requests get a fault, and how many of them. */
export interface FaultRule {
  /** What happens to a request the rule applies to. */
  readonly fault: Fault;
  /** DynamoDB operation, e.g. 'PutItem'; any operation when omitted. */
  readonly operation?: string;
  /** TableName of the request; any table when omitted. */
  readonly table?: string;
  /** The rule applies to this many matching requests, then lapses; to every matching request when omitted. */
  readonly times?: number;
  /**
   * Applies only to every n-th matching request (1 = each), for steady fault rates; counts before
   * `times`, so `{ every: 3, times: 2 }` hits the 3rd and 6th matching requests, then lapses.
   */
  readonly every?: number;
  /** For 'delay' only, and required by it: the shortest and longest wait, in milliseconds. */
  readonly delayMs?: readonly [min: number, max: number];
}

/** One request as the proxy saw it. */
export interface ProxiedRequest {
  /** DynamoDB operation from `X-Amz-Target` (e.g. 'PutItem'); '' when the header is missing. */
  readonly operation: string;
  /** TableName of the request body, when it has one (BatchWriteItem, for one, has not). */
  readonly table?: string;
  /** The fault applied to the request; absent when it was passed through. */
  readonly fault?: Fault;
  /** The partition whose emulated limit throttled the request (`limitPartitions`); absent when none did. */
  readonly throttledBy?: PartitionOf;
}

/** A running proxy; see `startFaultProxy`. */
export interface FaultProxy {
  /** http://127.0.0.1:<port>; stays the same across refuse/accept. */
  readonly endpoint: string;
  /** Adds a rule; the first matching rule that still applies decides a request's fault. */
  inject(rule: FaultRule): void;
  /** Removes every rule and ends every stalled request and every stalled or dripping answer (their connections are destroyed). */
  clear(): void;
  /** Stops listening and destroys open connections, so new ones are refused (ECONNREFUSED): DynamoDB's endpoint is down. */
  refuseConnections(): Promise<void>;
  /** Listens again on the same port: the store comes back. */
  acceptConnections(): Promise<void>;
  /** Every request the proxy received, in order, with the fault applied to it. */
  readonly requests: readonly ProxiedRequest[];
  /**
   * From now on, enforces `limits` per partition (see `PartitionLimits`, and `partitionLimiter` for what
   * is charged); the buckets start full. Rules still come first: a request a rule selects is not charged.
   */
  limitPartitions(limits: PartitionLimits): void;
  /** Lifts the limits; the throttle counters stay. */
  unlimitPartitions(): void;
  /** The partitions an emulated limit throttled, with how many requests each, in the order first throttled. */
  partitionThrottles(): PartitionThrottles[];
  /** Stops listening, destroys every connection (ending stalls) and the connections to DynamoDB. */
  close(): Promise<void>;
}

/** A rule with its counters: matching requests seen, and times applied. */
interface ActiveRule {
  readonly rule: FaultRule;
  matched: number;
  applied: number;
}

const DYNAMODB_TARGET_PREFIX = 'DynamoDB_20120810.';

/** The body DynamoDB sends with a throttled request; the SDK names the error after `__type`. */
const THROTTLE_BODY = JSON.stringify({
  __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
  message:
    'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
});

/**
 * Headers that describe one connection, not the message (RFC 9110 §7.6.1): the proxy has a
 * connection of its own on each side, so it must not pass them on. Content-length stays: the body
 * is passed unchanged. `expect` goes too: Node's server has already answered 100-continue.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** The pace of a 'drip-body' answer: never idle for a second, yet slower than a second for even the shortest answer (`{}`). */
export const DRIP_INTERVAL_MS = 600;

/** What a 'non-json-body' answer carries: a proxy's error page, sent as a success. */
const NON_JSON_BODY = '<html><body><h1>502 Bad Gateway</h1></body></html>';

/** How long `acceptConnections` keeps retrying a port that is momentarily busy. */
const REBIND_RETRY_MS = 2_000;
const REBIND_INTERVAL_MS = 50;
/** How long `refuseConnections` waits for in-process clients to see their connections closed. */
const CLIENTS_SETTLE_MS = 20;

/**
 * Starts the proxy on a free loopback port in front of `upstreamEndpoint` (an http:// DynamoDB,
 * e.g. dynalite's endpoint). With no rules it passes every request through unchanged.
 */
export async function startFaultProxy(upstreamEndpoint: string): Promise<FaultProxy> {
  const upstream = new URL(upstreamEndpoint);
  if (upstream.protocol !== 'http:') throw new Error(`The fault proxy forwards to http:// only, not ${upstreamEndpoint}`);
  // Keep-alive towards DynamoDB too, as the SDK does; the pool is independent of the client's
  // connections, so a fault that destroys a client connection leaves it alone.
  const upstreamAgent = new Agent({ keepAlive: true });

  let rules: ActiveRule[] = [];
  let limiter: PartitionLimiter | undefined;
  const throttles = new Map<string, PartitionThrottles>();
  /** Key schemas, asked of DynamoDB once per table, on the first request that needs one. */
  const keySchemas = new Map<string, Promise<TableKeys | undefined>>();
  let describer: ReturnType<typeof createLocalClient> | undefined;
  function keysOf(table: string): Promise<TableKeys | undefined> {
    let keys = keySchemas.get(table);
    if (keys === undefined) {
      describer ??= createLocalClient(upstreamEndpoint, { maxAttempts: 1 });
      keys = describer.send(new DescribeTableCommand({ TableName: table })).then(
        ({ Table }) => (Table === undefined ? undefined : tableKeys(Table)),
        () => undefined,
      );
      keySchemas.set(table, keys);
    }
    return keys;
  }
  function countThrottle(partition: PartitionOf): void {
    const key = JSON.stringify([partition.table, partition.index ?? '', partition.value]);
    const counted = throttles.get(key) ?? { ...partition, throttled: 0 };
    throttles.set(key, { ...counted, throttled: counted.throttled + 1 });
  }
  const requests: ProxiedRequest[] = [];
  /** Every client connection of every listener, so refuse/clear/close can destroy them. */
  const sockets = new Set<Socket>();
  /** Client connections that hold a stalled request or a stalled or dripping answer. */
  const stalled = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let closed = false;
  /** refuse/accept/close run one after another, so a listener is never started twice. */
  let transitions: Promise<unknown> = Promise.resolve();

  function serially<T>(step: () => Promise<T>): Promise<T> {
    const next = transitions.then(step);
    transitions = next.catch(() => undefined);
    return next;
  }

  /**
   * The fault for a request. Every rule that still applies and matches counts the request (so an
   * `every` rate is a rate of matching requests, whichever rule decides them); the first rule whose
   * turn it is decides, and only that rule's `times` is used up.
   */
  function decide(operation: string, table: string | undefined): FaultRule | undefined {
    let fault: FaultRule | undefined;
    for (const active of rules) {
      const { rule } = active;
      if (rule.times !== undefined && active.applied >= rule.times) continue;
      if (rule.operation !== undefined && rule.operation !== operation) continue;
      if (rule.table !== undefined && rule.table !== table) continue;
      active.matched++;
      if (fault !== undefined || active.matched % (rule.every ?? 1) !== 0) continue;
      active.applied++;
      fault = rule;
    }
    return fault;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // The body is read whole before anything else: the table it names decides the fault. DynamoDB
    // requests are small (16 MB at most, for BatchWriteItem).
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const operation = operationOf(req.headers);
    const table = tableOf(body);
    const rule = decide(operation, table);
    const fault = rule?.fault;
    const recorded = requests.push({ operation, ...(table === undefined ? {} : { table }), ...(fault === undefined ? {} : { fault }) }) - 1;

    const socket = req.socket;
    switch (fault) {
      case 'drop-request':
        socket.destroy();
        return;
      case 'stall':
        // The request was read; nothing more happens on this connection until it is destroyed.
        holdOpen(socket);
        return;
      case 'throttle':
        answerError(res, THROTTLE_BODY);
        return;
      case 'lose-response':
      case 'stall-body':
      case 'drip-body':
      case 'non-json-body':
        forward(req, res, body, fault);
        return;
      case 'delay': {
        // inject() takes a 'delay' rule only with its delayMs.
        const [min, max] = rule!.delayMs!;
        await new Promise((resolve) => setTimeout(resolve, min + Math.random() * (max - min)));
        if (!socket.destroyed) forward(req, res, body, undefined);
        return;
      }
      case undefined: {
        const verdict = await limiter?.admit(operation, body);
        if (verdict?.throttledBy !== undefined) {
          // Other requests may have been recorded meanwhile: the limiter may have waited for a key schema.
          requests[recorded] = { ...requests[recorded]!, throttledBy: verdict.throttledBy };
          answerError(res, partitionThrottleBody(verdict.throttledBy));
          return;
        }
        forward(req, res, body, undefined, verdict?.charge);
        return;
      }
    }
  }

  /** Holds the client's connection open, for clear() or close() to end. */
  function holdOpen(socket: Socket): void {
    stalled.add(socket);
    socket.once('close', () => stalled.delete(socket));
  }

  /**
   * Sends the request on to DynamoDB and streams its answer back, or, for a fault on the answer, reads
   * it whole (so the write has certainly happened) and does to the client what the fault says. A read
   * under partition limits is read whole too, so that `charge` knows its size before the client does.
   */
  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    fault: AnswerFault | undefined,
    charge?: (answer: Buffer) => void,
  ): void {
    const socket = req.socket;
    const outgoing = httpRequest(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        // Host stays the proxy's, as the client sent (and signed) it; dynalite does not mind.
        // The body was read whole, so its length is known even if the client sent it chunked.
        headers: { ...endToEnd(req.headers), 'content-length': body.length },
        agent: upstreamAgent,
      },
      (answer) => {
        if (res.destroyed || socket.destroyed) {
          answer.resume();
          return;
        }
        if (fault === undefined && charge === undefined) {
          res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEnd(answer.headers));
          // A broken stream on either side ends the client's connection: it must not see half an answer as whole.
          pipeline(answer, res, (error) => {
            if (error) socket.destroy();
          });
          return;
        }
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        finished(answer, (error) => {
          if (error) {
            socket.destroy();
            return;
          }
          const whole = Buffer.concat(chunks);
          // A read is charged once answered, as DynamoDB reports consumed capacity: its size is known only then.
          if (answer.statusCode === 200) charge?.(whole);
          if (fault === undefined) passOn(answer, whole, res);
          else answerWith(fault, answer, whole, res);
        });
      },
    );
    // DynamoDB unreachable behind the proxy: the client sees its connection fail, as it would.
    outgoing.on('error', () => socket.destroy());
    outgoing.end(body);
  }

  /** Gives the client DynamoDB's whole answer as it came. */
  function passOn(answer: IncomingMessage, body: Buffer, res: ServerResponse): void {
    if (res.socket === null || res.socket.destroyed) return;
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, { ...endToEnd(answer.headers), 'content-length': body.length });
    res.end(body);
  }

  /** Gives the client DynamoDB's whole answer the way `fault` breaks it. */
  function answerWith(fault: AnswerFault, answer: IncomingMessage, body: Buffer, res: ServerResponse): void {
    const socket = res.socket;
    if (socket === null || socket.destroyed) return;
    const headers = endToEnd(answer.headers);
    switch (fault) {
      case 'lose-response':
        socket.destroy();
        return;
      case 'non-json-body':
        // The intermediary's headers, not DynamoDB's: no request id, no CRC32 of a body it never sent.
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(NON_JSON_BODY) });
        res.end(NON_JSON_BODY);
        return;
      case 'stall-body':
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, { ...headers, 'content-length': body.length });
        // Sends the head now rather than with the first byte of a body that never comes.
        res.flushHeaders();
        holdOpen(socket);
        return;
      case 'drip-body': {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, { ...headers, 'content-length': body.length });
        res.flushHeaders();
        holdOpen(socket);
        let sent = 0;
        const drip = setInterval(() => {
          if (sent < body.length) res.write(body.subarray(sent, ++sent));
          if (sent === body.length) {
            clearInterval(drip);
            res.end();
            // The answer is whole: the connection is an ordinary keep-alive one again, which clear() leaves alone.
            stalled.delete(socket);
          }
        }, DRIP_INTERVAL_MS);
        socket.once('close', () => clearInterval(drip));
        return;
      }
    }
  }

  function createListener(): Server {
    const listener = createServer((req, res) => {
      handle(req, res).catch(() => req.socket.destroy());
    });
    // Defaults of Node's server would close an idle keep-alive connection after 5 s, racing a client
    // that reuses it at that moment (ECONNRESET) and failing tests that injected no fault.
    listener.keepAliveTimeout = 60_000;
    listener.on('connection', (socket: Socket) => {
      sockets.add(socket);
      // Destroyed connections may report errors (ECONNRESET, EPIPE); they are expected here.
      socket.on('error', () => undefined);
      socket.once('close', () => sockets.delete(socket));
    });
    // Without a listener, an 'error' after listening (e.g. EMFILE on accept) would crash the test run.
    listener.on('error', () => undefined);
    return listener;
  }

  /** Binds a new listener to `port` (0 the first time: any free port), retrying briefly while the port is busy. */
  async function startListening(): Promise<void> {
    const deadline = Date.now() + REBIND_RETRY_MS;
    for (;;) {
      const listener = createListener();
      listener.listen(port, '127.0.0.1');
      try {
        await once(listener, 'listening');
        port = (listener.address() as AddressInfo).port;
        server = listener;
        return;
      } catch (error) {
        listener.close();
        if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE' || Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, REBIND_INTERVAL_MS));
      }
    }
  }

  async function stopListening(): Promise<void> {
    const listener = server;
    server = undefined;
    if (listener === undefined) return;
    // close() stops accepting at once; its callback waits for the open connections, so end them.
    const stoppedListening = new Promise<void>((resolve) => listener.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await stoppedListening;
    // The clients of a test usually live in this process: give them a moment to read the end of
    // their pooled keep-alive connections, so that their next request opens a new one and is refused
    // (ECONNREFUSED) rather than sent on a connection they have not yet seen closed (ECONNRESET).
    await new Promise((resolve) => setTimeout(resolve, CLIENTS_SETTLE_MS));
  }

  await startListening();

  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject(rule) {
      if (rule.times !== undefined && !(Number.isInteger(rule.times) && rule.times >= 0)) {
        throw new RangeError(`times must be a whole number, not ${rule.times}`);
      }
      if (rule.every !== undefined && !(Number.isInteger(rule.every) && rule.every >= 1)) {
        throw new RangeError(`every must be a whole number from 1, not ${rule.every}`);
      }
      if ((rule.fault === 'delay') !== (rule.delayMs !== undefined)) {
        throw new RangeError("delayMs goes with the 'delay' fault, and only with it");
      }
      if (rule.delayMs !== undefined && !(rule.delayMs[0] >= 0 && rule.delayMs[1] >= rule.delayMs[0])) {
        throw new RangeError(`delayMs must be [min, max] with 0 <= min <= max, not [${rule.delayMs.join(', ')}]`);
      }
      rules.push({ rule: { ...rule }, matched: 0, applied: 0 });
    },
    clear() {
      rules = [];
      for (const socket of stalled) socket.destroy();
      stalled.clear();
    },
    refuseConnections: () => serially(stopListening),
    acceptConnections: () =>
      serially(async () => {
        if (closed) throw new Error('The fault proxy is closed');
        if (server === undefined) await startListening();
      }),
    get requests() {
      return requests;
    },
    limitPartitions(limits) {
      for (const [name, value] of Object.entries(limits)) {
        if (!(Number.isFinite(value) && value > 0)) throw new RangeError(`${name} must be a positive number, not ${value}`);
      }
      limiter = partitionLimiter(limits, keysOf, countThrottle);
    },
    unlimitPartitions() {
      limiter = undefined;
    },
    partitionThrottles: () => [...throttles.values()],
    close: () =>
      serially(async () => {
        closed = true;
        rules = [];
        await stopListening();
        // Connections of a listener already stopped by refuseConnections are gone too; stalls with them.
        for (const socket of sockets) socket.destroy();
        stalled.clear();
        upstreamAgent.destroy();
        describer?.destroy();
      }),
  };
}

/** Answers as DynamoDB answers a request it refuses: HTTP 400 with a JSON error body, never forwarded. */
function answerError(res: ServerResponse, body: string): void {
  res.writeHead(400, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(body);
}

function partitionThrottleBody({ table, index, value }: PartitionOf): string {
  return JSON.stringify({
    __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
    message: `Throughput exceeds the current capacity for partition key value ${JSON.stringify(value)} of ${
      index === undefined ? `table ${table}` : `index ${index} of table ${table}`
    } (emulated per-partition limit)`,
  });
}

/** The operation named by `X-Amz-Target: DynamoDB_20120810.<Operation>`; '' when there is none. */
function operationOf(headers: IncomingHttpHeaders): string {
  const target = headers['x-amz-target'];
  if (typeof target !== 'string') return '';
  return target.startsWith(DYNAMODB_TARGET_PREFIX) ? target.slice(DYNAMODB_TARGET_PREFIX.length) : target;
}

/** The body's TableName, when it is JSON and names one. */
function tableOf(body: Buffer): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const { TableName } = parsed as { TableName?: unknown };
    return typeof TableName === 'string' ? TableName : undefined;
  } catch {
    return undefined;
  }
}

/** The headers without the hop-by-hop ones, including any that `Connection` itself names. */
function endToEnd(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  );
  const kept: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || named.has(name)) continue;
    kept[name] = value;
  }
  return kept;
}
