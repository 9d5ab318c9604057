import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { localDynamoDbEnvironment } from '../../local/dynamodb-local';
import { RESPONSE_RESERVE_MS, runWithDeadline } from '../../shared/runtime/deadline';
import {
  DYNAMODB_MAX_ATTEMPTS,
  createDocumentClient,
  dynamoDbCallBudgetMs,
  isStoreUnavailable,
} from '../../shared/dynamodb/dynamodb-client';
import { DynamoIdempotencyStore } from '../../shared/dynamodb/dynamo-idempotency-store';
import { DynamoPetStore } from '../../shared/dynamodb/dynamo-pet-store';
import { startBlackHole, type BlackHole } from '../helpers/black-hole';
import { snapshotEnv } from '../helpers/env';
import { httpEvent, lambdaContext } from '../../tools/lambda/events';

/**
 * The SDK configuration of shared/dynamodb/dynamodb-client.ts against a DynamoDB that accepts connections and never
 * answers: the time budget is what the clock says, not what shared/facts/time-budget.ts computes.
 */
vi.hoisted(() => {
  process.env.PETS_TABLE_NAME = 'time-budget-pets';
  process.env.IDEMPOTENCY_TABLE_NAME = 'time-budget-idempotency';
  process.env.PETS_WRITE_SHARDS = '8';
});
const { createCreatePetHandler } = await import('../../functions/create-pet');

let blackHole: BlackHole;
let restoreEnv: () => void;
beforeAll(async () => {
  restoreEnv = snapshotEnv();
  blackHole = await startBlackHole();
  // The handlers run in this process here, so this process's SDK clients are pointed at the black hole.
  Object.assign(process.env, localDynamoDbEnvironment(blackHole.endpoint));
  delete process.env.AWS_PROFILE;
  delete process.env.AWS_SESSION_TOKEN;
});
afterAll(async () => {
  await blackHole?.close();
  restoreEnv?.();
});

/** Runs a promise to its end and reports how it ended and how long it took. */
async function timed<T>(work: Promise<T>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now();
  try {
    await work;
    return { error: undefined, ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

const getItem = new GetCommand({ TableName: 'any', Key: { id: 1 } });

describe('a DynamoDB client of shared/dynamodb/dynamodb-client.ts, facing a store that never answers', () => {
  it('gives up after its attempts, each cut at the attempt timeout, within the computed budget', async () => {
    const client = createDocumentClient();
    const connectionsBefore = blackHole.connections;
    const { error, ms } = await timed(client.send(getItem));
    expect(isStoreUnavailable(error), String(error)).toBe(true);
    expect(blackHole.connections - connectionsBefore).toBe(DYNAMODB_MAX_ATTEMPTS);
    expect(ms).toBeGreaterThan(DYNAMODB_MAX_ATTEMPTS * 1_000 - 100);
    expect(ms).toBeLessThan(dynamoDbCallBudgetMs() + 750);
  });

  it('stops at the invocation deadline, retries and backoff included, when less time remains', async () => {
    const client = createDocumentClient();
    const remaining = 1_800;
    const { error, ms } = await timed(runWithDeadline({ getRemainingTimeInMillis: () => remaining }, () => client.send(getItem)));
    expect(isStoreUnavailable(error), String(error)).toBe(true);
    expect(ms).toBeGreaterThan(remaining - RESPONSE_RESERVE_MS - 100);
    expect(ms).toBeLessThan(remaining - RESPONSE_RESERVE_MS + 400);
  });
});

describe('createPet, facing a store that never answers', () => {
  const handler = () => {
    const documents = createDocumentClient();
    return createCreatePetHandler({
      store: new DynamoPetStore(documents, 'pets', 1),
      idempotency: new DynamoIdempotencyStore(documents, 'idempotency'),
    });
  };
  const post = (headers: Record<string, string> = {}) =>
    httpEvent({ method: 'POST', body: '{"name":"Rex","categoryId":1}', headers: { 'content-type': 'application/json', ...headers } });

  it.each([
    ['without an Idempotency-Key', {}],
    ['with an Idempotency-Key (several store calls, one deadline)', { 'idempotency-key': 'stalled-1' }],
  ])('answers 503 with Retry-After and our Error body before its Lambda timeout, %s', async (_, headers) => {
    const timeoutMs = 3_000;
    const started = performance.now();
    const response = await handler()(post(headers), lambdaContext({ timeoutMs }));
    const ms = performance.now() - started;
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('1');
    expect(JSON.parse(response.body!)).toMatchObject({ code: 'service_unavailable', status: 503 });
    expect(ms).toBeLessThan(timeoutMs);
  });
});
