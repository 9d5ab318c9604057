import {
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES, createLocalClient, ensureTables, startDynalite, type LocalDynamoDb } from '../../local/dynamodb-local';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { startFaultProxy, type FaultProxy } from './fault-proxy';

/**
 * The fault proxy's emulated per-partition limits against a real dynalite: a write stream above one
 * partition's scaled limit is throttled at the rate a token bucket predicts, the same stream spread
 * over partitions is not, and a throttled write leaves nothing in dynalite (read directly).
 */

let dynamoDb: LocalDynamoDb;
let proxy: FaultProxy;
let direct: DynamoDBClient;
/** One attempt: every ThrottlingException reaches the test. */
let proxied: DynamoDBClient;

const PETS = LOCAL_TABLES.pets;
/** DynamoDB's documented per-partition limits, scaled to 20 write units and 60 read units per second. */
const LIMITS = { writeUnitsPerSecond: 1_000, readUnitsPerSecond: 3_000, scale: 1 / 50 };
const WRITES_PER_SECOND = LIMITS.writeUnitsPerSecond * LIMITS.scale;
/** Three times one partition's write limit, for a second and a half. */
const STREAM = { perSecond: 3 * WRITES_PER_SECOND, seconds: 1.5 };
const { allPetsIndex } = PETS_TABLE;

beforeAll(async () => {
  dynamoDb = await startDynalite({ port: 0 });
  direct = createLocalClient(dynamoDb.endpoint);
  await ensureTables(direct);
  proxy = await startFaultProxy(dynamoDb.endpoint);
  proxied = createLocalClient(proxy.endpoint, { maxAttempts: 1 });
});
afterEach(() => proxy.unlimitPartitions());
afterAll(async () => {
  proxied?.destroy();
  direct?.destroy();
  await proxy?.close();
  await dynamoDb?.close();
});

/** Ids, each used by one test only. */
let nextId = 1;

interface Sent {
  readonly item: Record<string, AttributeValue>;
  readonly outcome: string;
}

/**
 * Sends `STREAM.perSecond` puts a second for `STREAM.seconds`, the n-th of `itemFor(n)`, each at its
 * time (at once when the previous one ended late); returns every outcome and how long the stream took.
 */
async function putStream(itemFor: (n: number) => Record<string, AttributeValue>): Promise<{ sent: Sent[]; seconds: number }> {
  const count = STREAM.perSecond * STREAM.seconds;
  const sent: Sent[] = [];
  const started = performance.now();
  for (let n = 0; n < count; n++) {
    const due = started + (n * 1000) / STREAM.perSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const item = itemFor(n);
    sent.push({ item, outcome: await outcome(proxied.send(new PutItemCommand({ TableName: PETS, Item: item }))) });
  }
  return { sent, seconds: (performance.now() - started) / 1000 };
}

async function outcome(send: Promise<unknown>): Promise<string> {
  try {
    await send;
    return 'ok';
  } catch (error) {
    return (error as Error).name;
  }
}

/** What a token bucket holding one second's worth and starting full lets through in `seconds`. */
function admittedWithin(seconds: number): number {
  return WRITES_PER_SECOND * (1 + seconds);
}

/** Every pet item of one test run (marked by `run`), read from dynalite directly. */
async function storedOfRun(run: string): Promise<Record<string, AttributeValue>[]> {
  const { Items = [] } = await direct.send(
    new ScanCommand({
      TableName: PETS,
      ConsistentRead: true,
      FilterExpression: '#run = :run',
      ExpressionAttributeNames: { '#run': 'run' },
      ExpressionAttributeValues: { ':run': { S: run } },
    }),
  );
  return Items;
}

describe('with partition limits', () => {
  it('throttles a put stream above one base partition’s limit at the predicted rate, and stores only what it let through', async () => {
    proxy.limitPartitions(LIMITS);
    const id = { N: String(nextId++) };
    const { sent, seconds } = await putStream((n) => ({ id, run: { S: 'one-key' }, seq: { N: String(n) } }));

    const admitted = sent.filter((put) => put.outcome === 'ok');
    expect(new Set(sent.map((put) => put.outcome))).toEqual(new Set(['ok', 'ThrottlingException']));
    expect(admitted.length).toBeLessThanOrEqual(admittedWithin(seconds) + 1);
    expect(admitted.length).toBeGreaterThanOrEqual(admittedWithin(seconds) - 3);
    // Every put overwrote the one item: it holds the last put let through, none of the throttled ones after it.
    expect(await storedOfRun('one-key')).toEqual([admitted.at(-1)?.item]);
    expect(proxy.partitionThrottles()).toContainEqual({ table: PETS, value: id.N, throttled: sent.length - admitted.length });
  });

  it('lets the same stream through when it is spread over partitions that each stay below the limit', async () => {
    proxy.limitPartitions(LIMITS);
    const ids = Array.from({ length: 6 }, () => ({ N: String(nextId++) }));
    const { sent } = await putStream((n) => ({ id: ids[n % ids.length]!, run: { S: 'spread' }, seq: { N: String(n) } }));

    expect(sent.map((put) => put.outcome)).toEqual(sent.map(() => 'ok'));
    const last = new Map(sent.map((put) => [put.item.id?.N, put.item]));
    expect(await storedOfRun('spread')).toEqual(expect.arrayContaining([...last.values()]));
    expect((await storedOfRun('spread')).length).toBe(ids.length);
  });

  it('charges index writes: items with distinct ids sharing one index partition are throttled by it, and those are not stored', async () => {
    proxy.limitPartitions(LIMITS);
    const from = proxy.requests.length;
    const { sent, seconds } = await putStream((n) => ({
      id: { N: String(nextId++) },
      run: { S: 'one-index-partition' },
      [allPetsIndex.partitionKey]: { S: 'shared' },
      [allPetsIndex.sortKey]: { S: `key-${n}` },
    }));

    const admitted = sent.filter((put) => put.outcome === 'ok');
    expect(admitted.length).toBeLessThanOrEqual(admittedWithin(seconds) + 1);
    expect(admitted.length).toBeGreaterThanOrEqual(admittedWithin(seconds) - 3);
    const storedIds = (await storedOfRun('one-index-partition')).map((item) => item.id?.N).sort();
    expect(storedIds).toEqual(admitted.map((put) => put.item.id?.N).sort());
    const throttledBy = { table: PETS, index: allPetsIndex.name, value: 'shared' };
    expect(proxy.partitionThrottles()).toContainEqual({ ...throttledBy, throttled: sent.length - admitted.length });
    expect(proxy.requests.slice(from).filter((request) => request.throttledBy !== undefined)).toEqual(
      sent.filter((put) => put.outcome !== 'ok').map(() => ({ operation: 'PutItem', table: PETS, throttledBy })),
    );
  });

  it('names the table, the index and the partition in the ThrottlingException’s message', async () => {
    proxy.limitPartitions({ ...LIMITS, scale: 1 / 1_000 });
    const item = (id: number) => ({
      id: { N: String(id) },
      [allPetsIndex.partitionKey]: { S: 'named' },
      [allPetsIndex.sortKey]: { S: 'k' },
    });
    await proxied.send(new PutItemCommand({ TableName: PETS, Item: item(nextId++) }));
    const id = nextId++;
    const error = await proxied.send(new PutItemCommand({ TableName: PETS, Item: item(id) })).catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    expect((error as Error).message).toContain(`index ${allPetsIndex.name} of table ${PETS}`);
    expect((error as Error).message).toContain('"named"');
    expect(await storedOfRunById(id)).toBe(false);
  });

  it('throttles a query once the read units of the answers before it have emptied its partition’s bucket', async () => {
    // Half a read unit a second: the bucket holds one eventually consistent read, charged once answered.
    proxy.limitPartitions({ ...LIMITS, readUnitsPerSecond: 25, scale: 1 / 50 });
    const query = new QueryCommand({
      TableName: PETS,
      IndexName: allPetsIndex.name,
      KeyConditionExpression: '#partition = :partition',
      ExpressionAttributeNames: { '#partition': allPetsIndex.partitionKey },
      ExpressionAttributeValues: { ':partition': { S: 'shared' } },
      ConsistentRead: false,
    });
    const throttledOfShared = () =>
      proxy.partitionThrottles().find((counted) => counted.index === allPetsIndex.name && counted.value === 'shared')?.throttled ?? 0;
    const before = throttledOfShared();
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await outcome(proxied.send(query)));
    // The bucket needs a second to hold half a unit again.
    expect(outcomes).toEqual(['ok', 'ThrottlingException', 'ThrottlingException', 'ThrottlingException']);
    expect(throttledOfShared() - before).toBe(3);
  });
});

describe('reading one item', () => {
  it('charges a get by the size of the item it returns, per 4 KB, halved unless strongly consistent', async () => {
    const id = { N: String(nextId++) };
    // About 9 KB: three read units strongly consistent, one and a half eventually consistent.
    await direct.send(new PutItemCommand({ TableName: PETS, Item: { id, payload: { S: 'x'.repeat(9_000) } } }));
    const get = (consistent: boolean) => new GetItemCommand({ TableName: PETS, Key: { id }, ConsistentRead: consistent });

    // Three read units a second, and as many in the bucket.
    proxy.limitPartitions({ ...LIMITS, scale: 1 / 1_000 });
    expect([await outcome(proxied.send(get(true))), await outcome(proxied.send(get(true)))]).toEqual(['ok', 'ThrottlingException']);
    proxy.limitPartitions({ ...LIMITS, scale: 1 / 1_000 });
    const eventually = [];
    for (let i = 0; i < 3; i++) eventually.push(await outcome(proxied.send(get(false))));
    expect(eventually).toEqual(['ok', 'ok', 'ThrottlingException']);
  });
});

describe('once the limits are lifted', () => {
  it('passes every request again', async () => {
    proxy.limitPartitions({ ...LIMITS, scale: 1 / 1_000 });
    proxy.unlimitPartitions();
    const id = { N: String(nextId++) };
    const { sent } = await putStream((n) => ({ id, run: { S: 'lifted' }, seq: { N: String(n) } }));
    expect(sent.every((put) => put.outcome === 'ok')).toBe(true);
  });
});

async function storedOfRunById(id: number): Promise<boolean> {
  const { Items = [] } = await direct.send(
    new ScanCommand({
      TableName: PETS,
      ConsistentRead: true,
      FilterExpression: 'id = :id',
      ExpressionAttributeValues: { ':id': { N: String(id) } },
    }),
  );
  return Items.length > 0;
}
