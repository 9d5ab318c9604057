import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { production } from '../../infra/stages';
import { ENV } from '../../shared/facts/environment';
import { findRoute, OPERATION_IDS, type OperationId } from '../../shared/facts/routes';
import { namesPet } from '../../tools/bench/bench-events';
import { OPERATIONS } from '../../shared/operations/operations';
import { type AnswerClassId, billRowOf, ANSWER_CLASSES, unknownKey } from '../../tools/bench/answer-classes';
import { MAX_LOG_BYTES } from '../../tools/bench/bench-verdicts';
import { LOG_BYTES_BESIDE_FUNCTIONS } from '../../tools/bench/log-lines';
import { startTestApi, storeOutage, type TestApi } from '../helpers/local-api';
import { captureOutput, type CapturedOutput } from '../helpers/output';

// What a request costs in CloudWatch Logs at production's settings, counted as the bill counts it: the
// lines its two functions write, Lambda's own (none at WARN) and API Gateway's access log line.

let api: TestApi;
/** The same API, its route functions' DynamoDB a closed port: a store outage behind a working authorizer. */
let outage: TestApi;
let output: CapturedOutput;

beforeAll(async () => {
  // From the start, so the warm-up's lines stay out of the test run's output; each request's are found by its id.
  output = captureOutput({ silent: true });
  const productionSettings = { [ENV.logLevel]: production.logLevel, [ENV.metricsDisabled]: 'false' };
  api = await startTestApi({ systemLogLevel: 'WARN', functionEnvironment: () => productionSettings });
  outage = await startTestApi({
    systemLogLevel: 'WARN',
    functionEnvironment: storeOutage(productionSettings),
  });
  // Every function warm: a cold start's own metric line is not a request's.
  for (const send of Object.values(REQUESTS)) await (await send()).arrayBuffer();
});

afterAll(async () => {
  output?.stop();
  await api?.close();
  await outage?.close();
});

/**
 * An operation's bench request (its file of shared/operations/), sent through the local API: what the bench bills.
 * Where its path names a pet, a pet created for it alone, so a request that consumes its pet leaves the next one its own.
 */
async function benchRequest(operationId: OperationId): Promise<Response> {
  const { method, path } = findRoute(operationId);
  const { query, headers, body } = OPERATIONS[operationId].bench.request;
  const search = query === undefined ? '' : `?${new URLSearchParams(query)}`;
  const petId = namesPet(operationId) ? (await api.createPet({ name: 'Logged', categoryId: 1 })).id : undefined;
  return api.request(`${path.replace(/\{\w+\}/g, String(petId))}${search}`, { method, headers, body });
}

let unknownKeys = 0;
/** Each answer class's request (tools/bench/answer-classes.ts), as a client sends it. */
const ANSWER_REQUESTS: Readonly<Record<AnswerClassId, () => Promise<Response>>> = {
  'createPet, invalid body': () =>
    api.request('/pets', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ categoryId: 3, status: 'available' }),
    }),
  'listPets, invalid limit': () => api.request('/pets?limit=0'),
  anonymous: () => api.request('/pets', { anonymous: true }),
  // A new key each time, as the authorizer keeps its refusals.
  'unknown key': () => api.request('/pets', { headers: { authorization: `Bearer ${unknownKey(unknownKeys++)}` } }),
  'getPet, no such pet': () => api.request('/pets/9000000000000'),
  'unmatched route': () => api.request('/nowhere'),
  'store unavailable': () => outage.request('/pets/1'),
};

/** Each budgeted bill row's request. */
const REQUESTS: Readonly<Record<string, () => Promise<Response>>> = {
  ...Object.fromEntries(OPERATION_IDS.map((operationId) => [operationId, () => benchRequest(operationId)])),
  ...Object.fromEntries(ANSWER_CLASSES.map((answerClass) => [billRowOf(answerClass), ANSWER_REQUESTS[answerClass.id]])),
};

/** Bytes CloudWatch Logs ingests for one request: each of its lines and its newline. */
async function logBytesOf(send: () => Promise<Response>): Promise<{ status: number; bytes: number; lines: string[] }> {
  const response = await send();
  await response.arrayBuffer();
  const requestId = response.headers.get('apigw-requestid');
  const lines = output.lines.filter((line) => line.includes(`"requestId":"${requestId}"`));
  const functionBytes = lines.reduce((sum, line) => sum + Buffer.byteLength(`${line}\n`), 0);
  return { status: response.status, bytes: functionBytes + LOG_BYTES_BESIDE_FUNCTIONS, lines };
}

describe('log bytes per request, at production settings', () => {
  it('has a request for every budgeted bill row, every operation included', () => {
    expect(Object.keys(REQUESTS).sort()).toEqual(Object.keys(MAX_LOG_BYTES).sort());
  });

  it.each(Object.keys(MAX_LOG_BYTES))('%s writes no more than its budget', async (row) => {
    const { status, bytes, lines } = await logBytesOf(REQUESTS[row]!);
    const answerClass = ANSWER_CLASSES.find((candidate) => billRowOf(candidate) === row);
    if (answerClass !== undefined) expect(status).toBe(answerClass.status);
    expect(bytes, lines.join('\n')).toBeLessThanOrEqual(MAX_LOG_BYTES[row]!);
  });

  it('a refused request writes nothing of its own: the access log line says who was refused and why', async () => {
    for (const authorization of [undefined, 'Bearer pets_notAKeyOfThisStage0123456789']) {
      const { status, lines } = await logBytesOf(() =>
        api.request('/pets', authorization ? { headers: { authorization } } : { anonymous: true }),
      );
      expect(status).toBe(401);
      expect(lines).toEqual([]);
    }
  });
});
