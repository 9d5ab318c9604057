import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import {
  GetItemCommand,
  ProvisionedThroughputExceededException,
  PutItemCommand,
  type DynamoDBClient,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES, createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../local/dynamodb-local';
import { IDEMPOTENCY_TABLE } from '../../shared/dynamodb/idempotency-table';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { DRIP_INTERVAL_MS, startFaultProxy, type FaultProxy } from './fault-proxy';

/**
 * The fault proxy against a real dynalite: each fault must do to the AWS SDK what the network does
 * in production, and leave dynalite holding exactly what that fault implies. What dynalite holds is
 * read from it directly, behind the proxy's back.
 */

let dynamoDb: LocalDynamoDb;
let proxy: FaultProxy;
/** Talks to dynalite directly: the truth about what was stored. */
let direct: DynamoDBClient;
/** Talks through the proxy; one attempt and short timeouts, so every fault surfaces at once. */
let proxied: DynamoDBClient;
let clientAgent: Agent;

const PETS = LOCAL_TABLES.pets;
const IDEMPOTENCY = LOCAL_TABLES.idempotency;
const TIMEOUTS = { connectionTimeout: 500, requestTimeout: 500, throwOnRequestTimeout: true };

function throughProxy(config: DynamoDBClientConfig = {}): DynamoDBClient {
  return createLocalClient(proxy.endpoint, { maxAttempts: 1, ...config });
}

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  direct = createLocalClient(dynamoDb.endpoint);
  await ensureTables(direct);
  proxy = await startFaultProxy(dynamoDb.endpoint);
  clientAgent = new Agent({ keepAlive: true });
  proxied = throughProxy({ requestHandler: { ...TIMEOUTS, httpAgent: clientAgent } });
});
afterEach(async () => {
  proxy.clear();
  await proxy.acceptConnections();
});
afterAll(async () => {
  proxied?.destroy();
  direct?.destroy();
  await proxy?.close();
  await dynamoDb?.close();
});

/** Pet ids, each used by one test only; dynalite starts empty for this file. */
let nextId = 1;

function putPet(id: number) {
  // The index attributes are left out: both indexes are sparse, so a bare item is a valid pet row.
  return new PutItemCommand({ TableName: PETS, Item: { [PETS_TABLE.partitionKey]: { N: String(id) }, name: { S: `pet ${id}` } } });
}

function getPet(id: number) {
  return new GetItemCommand({ TableName: PETS, Key: { [PETS_TABLE.partitionKey]: { N: String(id) } }, ConsistentRead: true });
}

function putRecord(id: string) {
  return new PutItemCommand({ TableName: IDEMPOTENCY, Item: { [IDEMPOTENCY_TABLE.partitionKey]: { S: id } } });
}

function getRecord(id: string) {
  return new GetItemCommand({ TableName: IDEMPOTENCY, Key: { [IDEMPOTENCY_TABLE.partitionKey]: { S: id } } });
}

/** Whether dynalite holds the pet, asked directly. */
async function stored(id: number): Promise<boolean> {
  return (await direct.send(getPet(id))).Item !== undefined;
}

/** The requests the proxy recorded since `from`, as `<operation> <fault or 'passed'>`. */
function recordedSince(from: number): string[] {
  return proxy.requests.slice(from).map((request) => `${request.operation} ${request.fault ?? 'passed'}`);
}

/** The error a send rejects with; fails the test if it resolves. */
async function failure(
  send: Promise<unknown>,
): Promise<Error & { code?: string; $metadata?: { httpStatusCode?: number; requestId?: string } }> {
  try {
    await send;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the request to fail, but it succeeded');
}

/** Network failures, as the SDK reports them when a connection breaks; not an answer from DynamoDB. */
const CONNECTION_BROKEN = ['ECONNRESET', 'EPIPE', 'ECONNABORTED'];

function expectNoAnswer(error: Awaited<ReturnType<typeof failure>>): void {
  expect(error.$metadata?.httpStatusCode).toBeUndefined();
  expect(CONNECTION_BROKEN).toContain(error.code);
}

/** The proxy's connection from our client, once idle: the keep-alive socket the next request reuses. */
function idleSockets(): Socket[] {
  return Object.values(clientAgent.freeSockets).flatMap((sockets) => sockets ?? []);
}

describe('without faults', () => {
  it('passes requests through unchanged, reusing one keep-alive connection', async () => {
    const id = nextId++;
    const from = proxy.requests.length;
    await proxied.send(putPet(id));
    const [connection] = idleSockets();
    expect(connection).toBeDefined();
    const { Item } = await proxied.send(getPet(id));
    expect(Item).toEqual({ id: { N: String(id) }, name: { S: `pet ${id}` } });
    for (let i = 0; i < 3; i++) await proxied.send(getPet(id));
    expect(idleSockets()).toEqual([connection]);
    expect(proxy.requests.slice(from)).toEqual([
      { operation: 'PutItem', table: PETS },
      { operation: 'GetItem', table: PETS },
      { operation: 'GetItem', table: PETS },
      { operation: 'GetItem', table: PETS },
      { operation: 'GetItem', table: PETS },
    ]);
  });

  it('passes DynamoDB’s own errors through, status and type', async () => {
    const error = await failure(proxied.send(new GetItemCommand({ TableName: 'no-such-table', Key: { id: { N: '1' } } })));
    expect(error.name).toBe('ResourceNotFoundException');
    expect(error.$metadata?.httpStatusCode).toBe(400);
  });
});

describe('lose-response', () => {
  it('fails the client although the write happened', async () => {
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', table: PETS, times: 1 });
    const id = nextId++;
    const from = proxy.requests.length;
    expectNoAnswer(await failure(proxied.send(putPet(id))));
    expect(await stored(id)).toBe(true);
    // Lapsed after once: the next request passes, on a fresh connection.
    expect((await proxied.send(getPet(id))).Item).toBeDefined();
    expect(recordedSince(from)).toEqual(['PutItem lose-response', 'GetItem passed']);
  });
});

describe('drop-request', () => {
  it('fails the client and nothing reaches DynamoDB', async () => {
    proxy.inject({ fault: 'drop-request', operation: 'PutItem' });
    const id = nextId++;
    expectNoAnswer(await failure(proxied.send(putPet(id))));
    expect(await stored(id)).toBe(false);
    expect(proxy.requests.at(-1)).toEqual({ operation: 'PutItem', table: PETS, fault: 'drop-request' });
  });
});

describe('stall', () => {
  it('makes the client time out, and nothing is stored', async () => {
    proxy.inject({ fault: 'stall', operation: 'PutItem' });
    const id = nextId++;
    const started = performance.now();
    const error = await failure(proxied.send(putPet(id)));
    expect(error.name).toBe('TimeoutError');
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await stored(id)).toBe(false);
    expect(proxy.requests.at(-1)?.fault).toBe('stall');
  });

  it('holds a patient client until clear() ends the stall', async () => {
    const patient = throughProxy();
    try {
      proxy.inject({ fault: 'stall', operation: 'PutItem' });
      const id = nextId++;
      const from = proxy.requests.length;
      const pending = failure(patient.send(putPet(id)));
      await until(() => proxy.requests.length > from);
      let settled = false;
      void pending.then(() => (settled = true));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(settled).toBe(false);

      proxy.clear();
      expectNoAnswer(await pending);
      expect(await stored(id)).toBe(false);
      // The rule went with clear(): the same client now gets through.
      await patient.send(putPet(id));
      expect(await stored(id)).toBe(true);
    } finally {
      patient.destroy();
    }
  });
});

describe('throttle', () => {
  it('surfaces as ProvisionedThroughputExceededException, and nothing is stored', async () => {
    proxy.inject({ fault: 'throttle', operation: 'PutItem', table: PETS, times: 1 });
    const id = nextId++;
    const [connection] = idleSockets();
    const error = await failure(proxied.send(putPet(id)));
    expect(error).toBeInstanceOf(ProvisionedThroughputExceededException);
    expect(error.name).toBe('ProvisionedThroughputExceededException');
    expect(error.$metadata?.httpStatusCode).toBe(400);
    expect(error.$metadata?.requestId).toMatch(/\S/);
    expect(await stored(id)).toBe(false);
    // A throttled answer is an answer: the connection stays open for the next request.
    await proxied.send(putPet(id));
    expect(await stored(id)).toBe(true);
    if (connection !== undefined) expect(idleSockets()).toEqual([connection]);
  });
});

describe('stall-body', () => {
  it('sends the head and withholds the body past the request timeout, until clear(); the write happened', async () => {
    const patient = throughProxy({ requestHandler: TIMEOUTS });
    try {
      proxy.inject({ fault: 'stall-body', operation: 'PutItem', table: PETS, times: 1 });
      const id = nextId++;
      const from = proxy.requests.length;
      const pending = failure(patient.send(putPet(id)));
      await until(() => proxy.requests.length > from);
      expect(await settlesWithin(pending, 2 * TIMEOUTS.requestTimeout)).toBe(false);
      expect(await stored(id)).toBe(true);

      proxy.clear();
      const error = await pending;
      expect(error.$metadata?.httpStatusCode).toBe(200);
      expect(recordedSince(from)).toEqual(['PutItem stall-body']);
    } finally {
      patient.destroy();
    }
  });
});

describe('drip-body', () => {
  it('passes the whole answer on, one byte at a time, past the request timeout; the write happened', async () => {
    const patient = throughProxy({ requestHandler: TIMEOUTS });
    try {
      proxy.inject({ fault: 'drip-body', operation: 'PutItem', table: PETS, times: 1 });
      const id = nextId++;
      const started = performance.now();
      // A PutItem's answer is `{}`: two drops, already slower than the request timeout.
      const answer = await patient.send(putPet(id));
      expect(answer.$metadata.httpStatusCode).toBe(200);
      expect(performance.now() - started).toBeGreaterThan(Math.max(TIMEOUTS.requestTimeout, 2 * DRIP_INTERVAL_MS * 0.9));
      expect(await stored(id)).toBe(true);
      expect(proxy.requests.at(-1)).toEqual({ operation: 'PutItem', table: PETS, fault: 'drip-body' });
    } finally {
      patient.destroy();
    }
  });
});

describe('non-json-body', () => {
  it('answers 200 with a body the SDK cannot parse, after the write happened', async () => {
    proxy.inject({ fault: 'non-json-body', operation: 'PutItem', table: PETS, times: 1 });
    const id = nextId++;
    const error = await failure(proxied.send(putPet(id)));
    expect(error.$metadata?.httpStatusCode).toBe(200);
    expect(error.name).toBe('SyntaxError');
    expect(await stored(id)).toBe(true);
    expect(proxy.requests.at(-1)).toEqual({ operation: 'PutItem', table: PETS, fault: 'non-json-body' });
  });
});

describe('delay', () => {
  it('forwards the request after a wait within delayMs, and the write happened', async () => {
    proxy.inject({ fault: 'delay', operation: 'PutItem', table: PETS, delayMs: [200, 300], times: 1 });
    const id = nextId++;
    const started = performance.now();
    const answer = await proxied.send(putPet(id));
    expect(answer.$metadata.httpStatusCode).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(200);
    expect(await stored(id)).toBe(true);
    expect(proxy.requests.at(-1)).toEqual({ operation: 'PutItem', table: PETS, fault: 'delay' });
  });

  it.each([
    ['without delayMs', { fault: 'delay' }],
    ['with delayMs on another fault', { fault: 'throttle', delayMs: [1, 2] }],
    ['with a longest wait below the shortest', { fault: 'delay', delayMs: [300, 200] }],
  ] as const)('refuses a rule %s', (_, rule) => {
    expect(() => proxy.inject(rule)).toThrow(RangeError);
  });
});

describe('refuseConnections and acceptConnections', () => {
  it('refuses connections like an endpoint that is down, then comes back on the same endpoint', async () => {
    const endpoint = proxy.endpoint;
    const { port } = new URL(endpoint);
    const id = nextId++;
    await proxied.send(getPet(id)); // an open keep-alive connection, which must go too

    await proxy.refuseConnections();
    const error = await failure(proxied.send(putPet(id)));
    expect(error.code).toBe('ECONNREFUSED');
    expect(await tcpConnect(Number(port))).toBe('ECONNREFUSED');
    expect(await stored(id)).toBe(false);

    await proxy.acceptConnections();
    expect(proxy.endpoint).toBe(endpoint);
    expect(await tcpConnect(Number(port))).toBe('connected');
    await proxied.send(putPet(id));
    expect(await stored(id)).toBe(true);
  });

  it('takes refuse and accept twice in a row in its stride', async () => {
    await proxied.send(getPet(nextId)); // an open keep-alive connection again
    await Promise.all([proxy.refuseConnections(), proxy.refuseConnections()]);
    expect((await failure(proxied.send(getPet(nextId)))).code).toBe('ECONNREFUSED');
    await Promise.all([proxy.acceptConnections(), proxy.acceptConnections()]);
    const id = nextId++;
    await proxied.send(putPet(id));
    expect(await stored(id)).toBe(true);
  });
});

describe('selecting requests', () => {
  it('applies a rule with times to that many matching requests, then lets them pass', async () => {
    proxy.inject({ fault: 'throttle', operation: 'PutItem', times: 2 });
    const from = proxy.requests.length;
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await outcome(proxied.send(putPet(nextId++))));
    expect(outcomes).toEqual(['ProvisionedThroughputExceededException', 'ProvisionedThroughputExceededException', 'ok', 'ok']);
    expect(recordedSince(from)).toEqual(['PutItem throttle', 'PutItem throttle', 'PutItem passed', 'PutItem passed']);
  });

  it('applies a rule with every to the n-th, 2n-th … matching request; times counts the applications', async () => {
    proxy.inject({ fault: 'throttle', operation: 'GetItem', every: 3 });
    proxy.inject({ fault: 'throttle', operation: 'PutItem', every: 2, times: 2 });
    const id = nextId++;
    const from = proxy.requests.length;
    for (let i = 0; i < 7; i++) await outcome(proxied.send(getPet(id)));
    for (let i = 0; i < 7; i++) await outcome(proxied.send(putPet(nextId++)));
    expect(recordedSince(from)).toEqual([
      ...['passed', 'passed', 'throttle', 'passed', 'passed', 'throttle', 'passed'].map((fault) => `GetItem ${fault}`),
      ...['passed', 'throttle', 'passed', 'throttle', 'passed', 'passed', 'passed'].map((fault) => `PutItem ${fault}`),
    ]);
  });

  it('matches operation and table, and the first rule that applies decides', async () => {
    proxy.inject({ fault: 'drop-request', operation: 'PutItem', table: IDEMPOTENCY });
    proxy.inject({ fault: 'throttle', table: IDEMPOTENCY });
    proxy.inject({ fault: 'lose-response', operation: 'GetItem', table: PETS, times: 1 });
    const id = nextId++;
    const record = `record-${id}`;
    const from = proxy.requests.length;

    expect(await outcome(proxied.send(putPet(id)))).toBe('ok');
    expect(await outcome(proxied.send(putRecord(record)))).toBe('ECONNRESET');
    expect(await outcome(proxied.send(getRecord(record)))).toBe('ProvisionedThroughputExceededException');
    expect(await outcome(proxied.send(getPet(id)))).toBe('ECONNRESET');
    expect(await outcome(proxied.send(getPet(id)))).toBe('ok');

    expect(proxy.requests.slice(from)).toEqual([
      { operation: 'PutItem', table: PETS },
      { operation: 'PutItem', table: IDEMPOTENCY, fault: 'drop-request' },
      { operation: 'GetItem', table: IDEMPOTENCY, fault: 'throttle' },
      { operation: 'GetItem', table: PETS, fault: 'lose-response' },
      { operation: 'GetItem', table: PETS },
    ]);
    expect((await direct.send(getRecord(record))).Item).toBeUndefined();
  });
});

/** 'ok', the error's code for a broken connection, or its name otherwise. */
async function outcome(send: Promise<unknown>): Promise<string> {
  try {
    await send;
    return 'ok';
  } catch (error) {
    const { code, name } = error as { code?: string; name: string };
    return code !== undefined && CONNECTION_BROKEN.includes(code) ? 'ECONNRESET' : name;
  }
}

/** Opens and closes a raw TCP connection to the port: 'connected', or the error's code. */
function tcpConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** Whether the promise settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const settled = await Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]);
  clearTimeout(timer);
  return settled;
}

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
