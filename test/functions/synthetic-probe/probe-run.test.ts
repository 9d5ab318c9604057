import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES } from '../../../local/dynamodb-local';
import { createSecretsClient, secretApiKeyReader } from '../../../functions/synthetic-probe/probe-api-key';
import { createProbeHandler, probeStage, type ProbeOutcome, type ProbeSettings } from '../../../functions/synthetic-probe/probe-run';
import { ENV } from '../../../shared/facts/environment';
import { PROBE_METRICS, SERVICE_DIMENSION } from '../../../shared/facts/metric-names';
import { SERVICE_NAME } from '../../../shared/facts/service';
import { PROBE_KEY_PLACEHOLDER } from '../../../shared/facts/probe-settings';
import { Logger } from '../../../shared/runtime/logger';
import { startBlackHole, type BlackHole } from '../../helpers/black-hole';
import { snapshotEnv } from '../../helpers/env';
import { startFakeSecretsManager, type FakeSecretsManager } from '../../helpers/fake-secrets-manager';
import type { FaultProxy } from '../../helpers/fault-proxy';
import { startFaultyApi, startTestApi, type FaultyApi, type TestApi } from '../../helpers/local-api';
import { captureOutput } from '../../helpers/output';
import { idempotencyRecords, storedPets } from '../../helpers/pets';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:111111111111:secret:SyntheticProbeApiKey-AbCdEf';
const NAMESPACE = 'AnimalStore/probe-test';

let api: TestApi;
let secrets: FakeSecretsManager;
let restoreEnv: () => void;

beforeAll(async () => {
  restoreEnv = snapshotEnv();
  // The test run turns metrics off (vitest.config.ts); the probe's are what these tests read, the API's stay off.
  Object.assign(process.env, { [ENV.metricsDisabled]: 'false', [ENV.metricsNamespace]: NAMESPACE });
  api = await startTestApi({ functionEnvironment: () => ({ [ENV.metricsDisabled]: 'true' }) });
  secrets = await startFakeSecretsManager({ [SECRET_ARN]: api.apiKey });
});

afterAll(async () => {
  await secrets?.close();
  await api?.close();
  restoreEnv?.();
});

/** The probe's key, read from the fake Secrets Manager as the deployed probe reads it from the real one. */
function keyFromSecret(secretId = SECRET_ARN) {
  const client = createSecretsClient({
    endpoint: secrets.endpoint,
    region: 'eu-west-1',
    credentials: { accessKeyId: 'probe-test', secretAccessKey: 'probe-test' },
  });
  return secretApiKeyReader(client, secretId);
}

function withKey(apiKey: string | undefined): ProbeSettings['readApiKey'] {
  return async () => apiKey;
}

function probed(outcome: ProbeOutcome) {
  if (outcome.status !== 'passed' && outcome.status !== 'failed') throw new Error(`nothing was probed: ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('the synthetic probe against a stage that answers', () => {
  it('passes: it lists pets, reads an unknown id as 404 when none is listed, and has a create that is no pet refused', async () => {
    const outcome = probed(await probeStage({ baseUrl: api.baseUrl, readApiKey: keyFromSecret() }));
    expect(outcome.status).toBe('passed');
    expect(outcome.steps.map((step) => [step.passed, step.title])).toEqual([
      [true, 'GET /pets with the key is 200 with a list of pets'],
      [true, 'GET /pets/{id} is 200 with a listed pet, or 404 for an id no pet has'],
      [true, 'POST /pets with a body that is no pet is 400 with the Error body'],
    ]);
    expect(outcome.steps[0]!.detail).toBe('0 on the first page');
    expect(outcome.steps[1]!.detail).toMatch(/^no pet listed; unknown pet \d+ is 404$/);
  });

  it('reads the first listed pet back by its key once there is one', async () => {
    const pet = await api.createPet({ name: 'Probed', categoryId: 3 });
    const outcome = probed(await probeStage({ baseUrl: api.baseUrl, readApiKey: withKey(api.apiKey) }));
    expect(outcome.status).toBe('passed');
    expect(outcome.steps[1]!.detail).toBe(`pet ${pet.id}`);
  });

  it('times the steps, and the run takes as long as its steps together', async () => {
    const outcome = probed(await probeStage({ baseUrl: api.baseUrl, readApiKey: withKey(api.apiKey) }));
    for (const step of outcome.steps) expect(step.ms).toBeGreaterThan(0);
    expect(outcome.latencyMs).toBe(outcome.steps.reduce((total, step) => total + step.ms, 0));
  });

  it('leaves nothing behind: no pet, no idempotency record', async () => {
    const before = { pets: await storedPets(api.documents), records: await idempotencyRecords(api.documents) };
    await probeStage({ baseUrl: api.baseUrl, readApiKey: withKey(api.apiKey) });
    expect({ pets: await storedPets(api.documents), records: await idempotencyRecords(api.documents) }).toEqual(before);
  });

  it('names itself in the User-Agent, as the access log shows it, and sends the key only in the Authorization header', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const recorder = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/v1`;
      await probeStage({ baseUrl, readApiKey: withKey(api.apiKey) });
      expect(seen).toHaveLength(3);
      for (const headers of seen) {
        expect(headers['user-agent']).toBe('animal-store-synthetic-probe');
        expect(headers.authorization).toBe(`Bearer ${api.apiKey}`);
        expect(JSON.stringify({ ...headers, authorization: undefined })).not.toContain(api.apiKey);
      }
    } finally {
      await new Promise((resolve) => recorder.close(resolve));
    }
  });

  it('reads the key afresh on every run: a key stored after a run is used by the next', async () => {
    secrets.secrets.set(SECRET_ARN, PROBE_KEY_PLACEHOLDER);
    const readApiKey = keyFromSecret();
    try {
      expect(await probeStage({ baseUrl: api.baseUrl, readApiKey })).toEqual({ status: 'not_configured' });
      secrets.secrets.set(SECRET_ARN, `${api.apiKey}\n`);
      expect((await probeStage({ baseUrl: api.baseUrl, readApiKey })).status).toBe('passed');
    } finally {
      secrets.secrets.set(SECRET_ARN, api.apiKey);
    }
  });
});

describe('the synthetic probe without a key', () => {
  let blackHole: BlackHole;
  beforeAll(async () => {
    blackHole = await startBlackHole();
  });
  afterAll(async () => {
    await blackHole?.close();
  });

  it.each([
    ['the placeholder the stack created it with', PROBE_KEY_PLACEHOLDER],
    ['nothing but blanks', ' \n'],
  ])('reports not configured, and calls nothing, while its secret holds %s', async (_, value) => {
    const secretId = `${SECRET_ARN}-${value.length}`;
    secrets.secrets.set(secretId, value);
    const outcome = await probeStage({ baseUrl: `${blackHole.endpoint}/v1`, readApiKey: keyFromSecret(secretId) });
    expect(outcome).toEqual({ status: 'not_configured' });
    expect(blackHole.connections).toBe(0);
  });

  it('fails, saying why, when the secret cannot be read', async () => {
    const outcome = await probeStage({ baseUrl: `${blackHole.endpoint}/v1`, readApiKey: keyFromSecret(`${SECRET_ARN}-deleted`) });
    expect(outcome).toEqual({ status: 'key_unreadable', reason: expect.stringMatching(/^ResourceNotFoundException: /) });
    expect(blackHole.connections).toBe(0);
  });
});

describe('the synthetic probe against a stage whose store fails one kind of request', () => {
  let behindProxy: FaultyApi;
  let proxy: FaultProxy;
  let faulty: TestApi;
  let tables: DynamoDBDocumentClient;
  beforeAll(async () => {
    behindProxy = await startFaultyApi();
    ({ proxy, api: faulty, tables } = behindProxy);
  });
  afterAll(async () => {
    await behindProxy?.close();
  });

  it('fails, naming the step that failed and what it got, and still runs the others', async () => {
    // Every listing throttled: the list function answers 503 once its retries are spent.
    proxy.inject({ fault: 'throttle', operation: 'Query', table: LOCAL_TABLES.pets });
    try {
      const outcome = probed(await probeStage({ baseUrl: faulty.baseUrl, readApiKey: withKey(faulty.apiKey) }));
      expect(outcome.status).toBe('failed');
      expect(outcome.steps.map((step) => step.passed)).toEqual([false, true, true]);
      expect(outcome.steps[0]!.detail).toMatch(/^expected 200, got 503: \{"code":"service_unavailable"/);
      // The probe writes nothing, even when a step fails.
      expect(await storedPets(tables)).toEqual([]);
      expect(await idempotencyRecords(tables)).toEqual([]);
    } finally {
      proxy.clear();
    }
  });
});

describe('the synthetic probe against a stage that does not answer', () => {
  it('fails every step at its time budget, not later', async () => {
    const blackHole = await startBlackHole();
    try {
      const started = Date.now();
      const outcome = probed(
        await probeStage({ baseUrl: `${blackHole.endpoint}/v1`, readApiKey: withKey(api.apiKey), stepTimeoutMs: 300 }),
      );
      expect(outcome.status).toBe('failed');
      for (const step of outcome.steps) expect(step.detail).toMatch(/^no answer within 0\.3 s from http:\/\/127\.0\.0\.1:\d+\/v1\/pets/);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await blackHole.close();
    }
  });
});

describe('the synthetic probe as a Lambda function', () => {
  const context = { functionName: 'AnimalStore-Test-SyntheticProbe', awsRequestId: 'probe-run-1' };

  /** Runs the handler once, with what it wrote to stdout and stderr parsed. */
  async function run(readApiKey: ProbeSettings['readApiKey']) {
    const output = captureOutput({ silent: true });
    const startedAt = Date.now();
    let outcome: ProbeOutcome;
    try {
      outcome = await createProbeHandler({ baseUrl: api.baseUrl, readApiKey, logger: new Logger(SERVICE_NAME, 'INFO') })({}, context);
    } finally {
      output.stop();
    }
    const endedAt = Date.now();
    const entries = output.json() as Array<Record<string, any>>;
    const metrics = entries.filter((entry) => '_aws' in entry);
    const logs = entries.filter((entry) => !('_aws' in entry));
    return { outcome, startedAt, endedAt, metrics, logs, text: output.lines.join('\n') };
  }

  /** The metric names and values of each EMF document, after checking its namespace and dimension. */
  function metricValues(metrics: ReadonlyArray<Record<string, any>>) {
    return metrics.map((document) => {
      const [directive] = document._aws.CloudWatchMetrics;
      expect(directive.Namespace).toBe(NAMESPACE);
      expect(directive.Dimensions).toEqual([[SERVICE_DIMENSION]]);
      expect(document[SERVICE_DIMENSION]).toBe(SERVICE_NAME);
      expect(document.requestId).toBe(context.awsRequestId);
      return Object.fromEntries(directive.Metrics.map((metric: { Name: string }) => [metric.Name, document[metric.Name]]));
    });
  }

  it('publishes success and the steps’ latency, stamped with the run’s start, and logs the steps without the key', async () => {
    const { outcome, startedAt, endedAt, metrics, logs, text } = await run(keyFromSecret());
    const { latencyMs } = probed(outcome);
    expect(metricValues(metrics)).toEqual([{ [PROBE_METRICS.success]: 1, [PROBE_METRICS.latency]: latencyMs }]);
    expect(metrics[0]!._aws.Timestamp).toBeGreaterThanOrEqual(startedAt);
    expect(metrics[0]!._aws.Timestamp).toBeLessThanOrEqual(endedAt - latencyMs);
    expect(metrics[0]!._aws.CloudWatchMetrics[0].Metrics).toEqual([
      { Name: PROBE_METRICS.success, Unit: 'None' },
      { Name: PROBE_METRICS.latency, Unit: 'Milliseconds' },
    ]);
    expect(logs).toEqual([expect.objectContaining({ level: 'INFO', message: 'Synthetic probe passed', baseUrl: api.baseUrl, latencyMs })]);
    expect(text).not.toContain(api.apiKey);
  });

  it('publishes a failure, and logs an error naming the first step that failed', async () => {
    const { outcome, metrics, logs } = await run(withKey('pets_notAKeyOfThisStage0123456789abcdefghijklmnop'));
    expect(outcome.status).toBe('failed');
    expect(metricValues(metrics)).toEqual([{ [PROBE_METRICS.success]: 0, [PROBE_METRICS.latency]: probed(outcome).latencyMs }]);
    expect(logs).toEqual([
      expect.objectContaining({ level: 'ERROR', message: 'Synthetic probe failed: GET /pets with the key is 200 with a list of pets' }),
    ]);
    expect(JSON.stringify(logs[0]!.steps)).toContain('expected 200, got 401');
  });

  it('counts a run without a key apart, publishing no success value, and warns how to configure it', async () => {
    secrets.secrets.set(SECRET_ARN, PROBE_KEY_PLACEHOLDER);
    try {
      const { outcome, metrics, logs } = await run(keyFromSecret());
      expect(outcome).toEqual({ status: 'not_configured' });
      expect(metricValues(metrics)).toEqual([{ [PROBE_METRICS.notConfigured]: 1 }]);
      expect(logs).toEqual([
        expect.objectContaining({
          level: 'WARN',
          message: expect.stringMatching(/^Synthetic probe not configured/),
          fix: expect.stringContaining('ProbeApiKeySecretArn'),
        }),
      ]);
    } finally {
      secrets.secrets.set(SECRET_ARN, api.apiKey);
    }
  });

  it('publishes a failure without latency when it cannot read its key', async () => {
    const { outcome, metrics, logs } = await run(keyFromSecret(`${SECRET_ARN}-deleted`));
    expect(outcome.status).toBe('key_unreadable');
    expect(metricValues(metrics)).toEqual([{ [PROBE_METRICS.success]: 0 }]);
    expect(logs).toEqual([expect.objectContaining({ level: 'ERROR', message: 'Synthetic probe failed: could not read its API key' })]);
  });
});
