import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_STAGE_NAME } from '../../local/dynamodb-local';
import { ENV } from '../../shared/facts/environment';
import { ANSWER_DIMENSIONS, METRICS, metricsNamespace, SERVICE_DIMENSION } from '../../shared/facts/metric-names';
import { SERVICE_NAME } from '../../shared/facts/service';
import { startTestApi, type TestApi } from '../helpers/local-api';
import { captureOutput, type CapturedOutput } from '../helpers/output';
import { postPet, postPetWithKey } from '../helpers/pets';

/** One CloudWatch embedded-metric-format record, as the functions print it. */
interface EmfRecord {
  readonly _aws: {
    CloudWatchMetrics: Array<{ Namespace: string; Dimensions: string[][]; Metrics: Array<{ Name: string; Unit: string }> }>;
  };
  readonly requestId?: string;
  readonly [key: string]: unknown;
}

let api: TestApi;
let output: CapturedOutput;
const requestIds: Record<'created' | 'keyedCreated' | 'replayed' | 'anonymous' | 'badKey' | 'notFound' | 'invalid', string> = {
  created: '',
  keyedCreated: '',
  replayed: '',
  anonymous: '',
  badKey: '',
  notFound: '',
  invalid: '',
};

beforeAll(async () => {
  // The test run turns metrics off (vitest.config.ts); these functions publish them.
  api = await startTestApi({ functionEnvironment: () => ({ [ENV.metricsDisabled]: 'false' }) });
  output = captureOutput({ silent: true });
  try {
    const idOf = (response: Response) => response.headers.get('apigw-requestid')!;
    const created = await postPet(api, { name: 'Counted', categoryId: 1 });
    expect(created.status).toBe(201);
    requestIds.created = idOf(created);
    const key = randomUUID();
    const first = await postPetWithKey(api, { name: 'Once', categoryId: 2 }, key);
    expect(first.status).toBe(201);
    requestIds.keyedCreated = idOf(first);
    const replay = await postPetWithKey(api, { name: 'Once', categoryId: 2 }, key);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    requestIds.replayed = idOf(replay);
    const anonymous = await api.request('/pets', { anonymous: true });
    expect(anonymous.status).toBe(401);
    requestIds.anonymous = idOf(anonymous);
    const badKey = await api.request('/pets', { headers: { authorization: 'Bearer pets_notAKeyOfThisStage0123456789' } });
    expect(badKey.status).toBe(401);
    requestIds.badKey = idOf(badKey);
    const notFound = await api.request('/pets/12345');
    expect(notFound.status).toBe(404);
    requestIds.notFound = idOf(notFound);
    const invalid = await postPet(api, { name: '' });
    expect(invalid.status).toBe(400);
    requestIds.invalid = idOf(invalid);
    for (let i = 0; i < 3; i++) expect((await api.request('/pets')).status).toBe(200);
  } finally {
    output.stop();
  }
});

afterAll(async () => {
  await api?.close();
});

function records(): EmfRecord[] {
  return output.json().filter((entry): entry is EmfRecord => '_aws' in entry);
}

function recordsOf(metricName: string): EmfRecord[] {
  return records().filter((record) => record._aws.CloudWatchMetrics[0]!.Metrics.some((metric) => metric.Name === metricName));
}

describe('business metrics', () => {
  it("are embedded-metric-format lines in the local stage's namespace, with the service dimension", () => {
    expect(records().length).toBeGreaterThan(0);
    for (const record of records()) {
      const [directive] = record._aws.CloudWatchMetrics;
      expect(directive!.Namespace).toBe(metricsNamespace(LOCAL_STAGE_NAME));
      expect(directive!.Dimensions[0]).toContain(SERVICE_DIMENSION);
      expect(record[SERVICE_DIMENSION]).toBe(SERVICE_NAME);
    }
  });

  it('count one pet created per stored pet, with or without an Idempotency-Key, each traced to its request', () => {
    const created = recordsOf(METRICS.petsCreated);
    expect(created.map((record) => record.requestId).sort()).toEqual([requestIds.created, requestIds.keyedCreated].sort());
    for (const record of created) expect(record[METRICS.petsCreated]).toBe(1);
  });

  it('count a replay as a replay, not as a creation', () => {
    expect(recordsOf(METRICS.idempotentReplays).map((record) => record.requestId)).toEqual([requestIds.replayed]);
    expect(recordsOf(METRICS.petsCreated).map((record) => record.requestId)).not.toContain(requestIds.replayed);
  });

  it('leave refused requests to the access log, which counts them (infra/monitoring.ts): a refusal writes no metric line', () => {
    const refusedIds = [requestIds.anonymous, requestIds.badKey];
    // The anonymous request is the first listPets serves, so its instance's cold start is counted.
    const business = records().filter((record) => !(METRICS.coldStart in record));
    expect(business.filter((record) => refusedIds.includes(record.requestId ?? ''))).toEqual([]);
    expect(business.map((record) => record.requestId)).toContain(requestIds.created);
  });

  it('count each judged answer to an accepted caller by function, status and version, and once more across versions; never a success', () => {
    const answers = recordsOf(METRICS.answers);
    expect(answers.map((record) => [record.requestId, record[ANSWER_DIMENSIONS.status]])).toEqual(
      expect.arrayContaining([
        [requestIds.notFound, '404'],
        [requestIds.invalid, '400'],
      ]),
    );
    expect(answers).toHaveLength(2);
    for (const record of answers) {
      // The local runtime runs every function as Lambda's unpublished version.
      expect(record[ANSWER_DIMENSIONS.version]).toBe('$LATEST');
      expect(record[METRICS.answers]).toBe(1);
      const [directive] = record._aws.CloudWatchMetrics;
      expect(directive!.Dimensions).toEqual([
        [SERVICE_DIMENSION, 'function_name', ANSWER_DIMENSIONS.status],
        [SERVICE_DIMENSION, 'function_name', ANSWER_DIMENSIONS.status, ANSWER_DIMENSIONS.version],
      ]);
    }
  });

  it('count one cold start per function instance, by function name, and none after', () => {
    const coldStarts = recordsOf(METRICS.coldStart).map((record) => record.function_name as string);
    expect(coldStarts.length).toBeGreaterThanOrEqual(3); // the authorizer, createPet, listPets
    expect(new Set(coldStarts).size).toBe(coldStarts.length);
    for (const name of coldStarts) expect(name).toMatch(/^animal-store-local-/);
  });
});
