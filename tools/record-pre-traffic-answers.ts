import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CHECK_KEY_NAME } from '../functions/pre-traffic-hook/check-keys';
import {
  CHECK_KEY_SHAPES,
  checksFor,
  type CheckContext,
  type CheckKeys,
  type CheckKeyShape,
} from '../functions/pre-traffic-hook/pre-traffic-expectations';
import { createFunctionRuntime } from '../local/functions';
import { createLocalClient, LOCAL_TABLES, prepareLocalStage, startDynalite } from '../local/dynamodb-local';
import type { ApiKeyRecord } from '../shared/domain/auth/api-key-store';
import { hashApiKey } from '../shared/domain/auth/api-keys';
import { DynamoApiKeyStore } from '../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { API_FUNCTIONS, type ApiFunctionName } from '../shared/facts/function-names';
import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { unhandled } from '../shared/runtime/unhandled';

// `npm run record:pre-traffic`: test/fixtures/pre-traffic-answers.json, each function's answers to each of its
// pre-traffic checks, which the hook's tests judge. test/tools/record-pre-traffic-answers.test.ts fails when it is stale.
export const PRE_TRAFFIC_ANSWERS_PATH = resolve(PROJECT_ROOT, 'test/fixtures/pre-traffic-answers.json');

/** Each API function's answers to its checks, in the order checksFor gives them. */
export type PreTrafficAnswers = Readonly<Record<ApiFunctionName, readonly unknown[]>>;

/**
 * The run the answers are recorded for. Fixed, where the hook draws fresh ones, so a recording is the same
 * every time: the unknown pet id and the keys' ids show in the answers, and the tests name them.
 */
export const RECORDING_CONTEXT = {
  runId: 'pre-traffic-d-TEST',
  unknownApiKey: 'pets_unknown-key-for-the-test',
  unknownPetId: 4_503_599_627_370_497,
  now: new Date('2026-11-25T12:00:00Z'),
  checkKeys: {
    withExpiry: { apiKey: 'pets_check-key-for-the-test', keyId: 'key_3f9a0c5e71b2d846' },
    withoutExpiry: { apiKey: 'pets_lasting-check-key-for-the-test', keyId: 'key_8c41d07a2e95b3f6' },
    revoked: { apiKey: 'pets_revoked-check-key-for-the-test', keyId: 'key_d2670b9e4a13c85f' },
  },
} as const satisfies CheckContext & { checkKeys: CheckKeys };

/** How long the key with an expiry works: past the recording, which takes seconds. */
const EXPIRY_MS = 60 * 60 * 1000;

/**
 * Runs each API function's handler as `npm start` does (its own bundle and environment, a worker per
 * instance) against a fresh dynalite with the local stage's tables, asks it each of its checks, and
 * returns the answers as it gave them. The keys table holds the run's check keys as the hook issues them.
 * Nothing needs normalizing: the context is fixed, the tables start empty, no answer carries a request id or
 * a clock's time, and the authorizer names its version as every local invocation does ($LATEST).
 */
export async function recordPreTrafficAnswers(): Promise<PreTrafficAnswers> {
  const dynamo = await startDynalite({ port: 0 });
  try {
    const environment = await prepareLocalStage(dynamo.endpoint, 'record-pre-traffic-cursor-secret-0123456789');
    await issueCheckKeys(dynamo.endpoint, Date.now());
    // The functions' log lines are not the answers: the recording is their return values alone.
    const runtime = await createFunctionRuntime({ environment, output: () => {}, systemLogLevel: 'WARN' });
    try {
      const answers: Partial<Record<ApiFunctionName, unknown[]>> = {};
      for (const fn of API_FUNCTIONS) {
        answers[fn] = [];
        for (const check of checksFor(fn, RECORDING_CONTEXT)) answers[fn].push(await runtime.invoke(fn, check.event));
      }
      return answers as PreTrafficAnswers;
    } finally {
      await runtime.close();
    }
  } finally {
    await dynamo.close();
  }
}

/** The fixture's text: the answers as JSON, two-space indented, ending in a newline. */
export function renderPreTrafficAnswers(answers: PreTrafficAnswers): string {
  return `${JSON.stringify(answers, null, 2)}\n`;
}

/** Stores each of RECORDING_CONTEXT's keys in the shape its name says, as the hook's check-keys.ts does. */
async function issueCheckKeys(endpoint: string, now: number): Promise<void> {
  const client = createLocalClient(endpoint);
  try {
    const store = new DynamoApiKeyStore(documentClientOver(client), LOCAL_TABLES.apiKeys);
    for (const shape of CHECK_KEY_SHAPES) await store.add(checkKeyRecord(shape, now));
  } finally {
    client.destroy();
  }
}

function checkKeyRecord(shape: CheckKeyShape, now: number): ApiKeyRecord {
  const { apiKey, keyId } = RECORDING_CONTEXT.checkKeys[shape];
  const createdAt = new Date(now).toISOString();
  const record = { keyId, keyHash: hashApiKey(apiKey), name: CHECK_KEY_NAME, createdAt };
  switch (shape) {
    case 'withExpiry':
      return { ...record, expiresAt: new Date(now + EXPIRY_MS).toISOString() };
    case 'revoked':
      return { ...record, revokedAt: createdAt };
    case 'withoutExpiry':
      return record;
    default:
      return unhandled(shape);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await writeFile(PRE_TRAFFIC_ANSWERS_PATH, renderPreTrafficAnswers(await recordPreTrafficAnswers()));
  process.stdout.write(`Wrote ${PRE_TRAFFIC_ANSWERS_PATH}\n`);
}
