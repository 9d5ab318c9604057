import type { ReleaseKind } from '../../infra/release-kind';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { staging } from '../../infra/stages';
import { routes, type Route } from '../../shared/facts/routes';
import { startBlackHole } from '../helpers/black-hole';
import { startFakeCloudFormation } from '../helpers/fake-cloudformation';
import { runCli } from '../helpers/cli';
import type { FaultProxy } from '../helpers/fault-proxy';
import { CLOSED_PORT } from '../../local/addresses';
import { startFaultyApi, startTestApi, type FaultyApi, type TestApi } from '../helpers/local-api';
import { storedPets } from '../helpers/pets';

const DEV_KEY = 'smoke-test-dev-key-0123456789';
const STEPS = 5;
/** What smoke may say of the API's operations only while the route table agrees. */
const NO_DELETE = 'The API has no delete operation';
const DELETES = (routes as readonly Route[]).some((route) => route.method === 'DELETE');

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ devApiKey: DEV_KEY });
});
afterAll(async () => {
  await api?.close();
});

/** `npm run smoke -- <args>`, with SMOKE_BASE_URL and SMOKE_API_KEY unset unless given. */
const smoke = (args: string[], env: Record<string, string> = {}) =>
  runCli('tools/smoke.ts', args, { SMOKE_BASE_URL: '', SMOKE_API_KEY: '', ...env });

/** The PASS/FAIL line of each step, in order. */
function stepLines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => /^(PASS|FAIL) {2}\d+\/\d+ /.test(line));
}

describe('npm run smoke against the local API', () => {
  it('passes every step and leaves exactly one pet, recognisably named, whose id it prints', async () => {
    const before = await storedPets(api.documents);
    const result = await smoke(['--base-url', api.baseUrl, '--key', DEV_KEY]);

    expect(result.code, result.stdout + result.stderr).toBe(0);
    const lines = stepLines(result.stdout);
    expect(lines).toHaveLength(STEPS);
    for (const [index, line] of lines.entries()) expect(line).toMatch(new RegExp(`^PASS {2}${index + 1}/${STEPS} `));
    expect(result.stdout).toContain(`${STEPS} of ${STEPS} steps passed.`);
    expect(result.stdout + result.stderr).not.toContain(DEV_KEY);

    const added = (await storedPets(api.documents)).filter((pet) => !before.some((earlier) => earlier.id === pet.id));
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({ name: expect.stringMatching(/^smoke-test \d{4}-\d\d-\d\dT/), status: 'sold' });
    expect(result.stdout).toContain(`Created pet ${added[0]!.id}`);
    expect(result.stdout).toContain(`--key '{"id":{"N":"${added[0]!.id}"}}'`);
    expect(result.stdout.includes(NO_DELETE), 'the note on the pet left behind').toBe(!DELETES);
  });

  it('says in its help that the API has no delete operation only while no route deletes', async () => {
    const result = await smoke(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout.includes(NO_DELETE)).toBe(!DELETES);
  });

  it('reads the base URL, without its /v1, and the key from SMOKE_BASE_URL and SMOKE_API_KEY', async () => {
    const result = await smoke([], { SMOKE_BASE_URL: api.baseUrl.replace(/\/v1$/, '/'), SMOKE_API_KEY: DEV_KEY });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`Smoke test of ${api.baseUrl}\n`);
  });

  it('fails, naming the step and showing the answer, with a key the stage does not know', async () => {
    const result = await smoke(['--base-url', api.baseUrl, '--key', 'pets_neverIssuedByThisStage0123456789abcdefghijk']);
    expect(result.code).toBe(1);
    const lines = stepLines(result.stdout);
    expect(lines[0]).toMatch(/^PASS {2}1\/5 {2}GET \/pets without a key/);
    expect(lines[1]).toMatch(/^FAIL {2}2\/5 {2}GET \/pets with the key .*: expected 200, got 401: \{"code":"unauthorized"/);
    expect(lines.filter((line) => line.startsWith('FAIL'))).toHaveLength(STEPS - 1);
  });
});

describe('npm run smoke that cleans up after itself', () => {
  const dynamoDbPort = () => new URL(api.dynamoDbEndpoint).port;

  it('with --local, deletes its pet from the local pets table and checks it is gone: nothing is left', async () => {
    const before = await storedPets(api.documents);
    const result = await smoke(['--local', '--base-url', api.baseUrl, '--key', DEV_KEY], { DYNAMODB_PORT: dynamoDbPort() });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const lines = stepLines(result.stdout);
    expect(lines).toHaveLength(STEPS + 1);
    expect(lines.at(-1)).toMatch(/^PASS {2}6\/6 {2}the smoke pet is deleted/);
    expect(await storedPets(api.documents)).toEqual(before);
    expect(result.stdout).not.toContain('aws dynamodb delete-item');
  });

  it('with --local and no key, issues a key of its own in the local store, passes, and leaves that key revoked', async () => {
    const keys = new DynamoApiKeyStore(api.documents, LOCAL_TABLES.apiKeys);
    const keysBefore = (await keys.list()).map((record) => record.keyId);
    const result = await smoke(['--local', '--base-url', api.baseUrl], { DYNAMODB_PORT: dynamoDbPort() });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(stepLines(result.stdout).filter((line) => line.startsWith('PASS'))).toHaveLength(STEPS + 1);
    const issued = (await keys.list()).filter((record) => !keysBefore.includes(record.keyId));
    expect(issued).toEqual([expect.objectContaining({ name: 'npm run smoke --local', revokedAt: expect.any(String) })]);
    expect(result.stdout).toContain(`Issued ${issued[0]!.keyId} in the local store`);
  });

  it('with --local alone, finds the API and its store by the settings npm start read, says where, and leaves nothing', async () => {
    const before = await storedPets(api.documents);
    const result = await smoke(['--local'], { PORT: String(api.port), HOST: '0.0.0.0', DYNAMODB_PORT: dynamoDbPort() });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(
      `The local API at ${api.baseUrl} (PORT, HOST), its DynamoDB at ${api.dynamoDbEndpoint} (DYNAMODB_PORT)\n`,
    );
    expect(stepLines(result.stdout).filter((line) => line.startsWith('PASS'))).toHaveLength(STEPS + 1);
    expect(await storedPets(api.documents)).toEqual(before);
  });

  it.each(['PORT', 'DYNAMODB_PORT'])("with --local, refuses %s=0, which only npm start's banner resolves, naming it", async (setting) => {
    const result = await smoke(['--local'], { PORT: String(api.port), DYNAMODB_PORT: dynamoDbPort(), [setting]: '0' });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`${setting} is 0, so npm start picked a free port: set ${setting} to the one it printed.\n`);
  });

  /** `npm run smoke -- --stage staging` against a stack whose outputs point at the local API, on this kind of release. */
  async function smokeStage(releaseKind: ReleaseKind) {
    const cloudFormation = await startFakeCloudFormation([
      {
        stackName: staging.stackName,
        account: staging.account,
        region: staging.region,
        outputs: { BaseUrl: api.baseUrl, PetsTableName: LOCAL_TABLES.pets, ReleaseKind: releaseKind },
      },
    ]);
    try {
      return await smoke(['--stage', 'staging'], {
        SMOKE_API_KEY: DEV_KEY,
        AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
        AWS_ENDPOINT_URL_DYNAMODB: api.dynamoDbEndpoint,
        AWS_ACCESS_KEY_ID: 'operator',
        AWS_SECRET_ACCESS_KEY: 'operator',
      });
    } finally {
      await cloudFormation.close();
    }
  }

  it("with --stage, finds the base URL and pets table from the stack's outputs, and leaves nothing", async () => {
    const before = await storedPets(api.documents);
    const result = await smokeStage('ordinary');
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`Smoke test of ${api.baseUrl}\n`);
    expect(stepLines(result.stdout)).toHaveLength(STEPS + 1);
    expect(await storedPets(api.documents)).toEqual(before);
    expect(result.stderr).not.toContain('EMERGENCY');
  });

  it('with --stage on an emergency release, passes as the steps do and ends with a warning line on stderr saying the way back', async () => {
    const result = await smokeStage('emergency');
    // The stage answers as the contract says: an emergency release is a state the operator chose, not a failure.
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(stepLines(result.stdout).filter((line) => line.startsWith('PASS'))).toHaveLength(STEPS + 1);
    expect(result.stderr.trim().split('\n').at(-1)).toMatch(
      /^WARNING: the staging stage runs an EMERGENCY release: .*no alarm rolls a deployment back\. Way back: deploy the same commit as an ordinary release/,
    );
  });
});

describe('npm run smoke against a stage whose store loses answers', () => {
  let behindProxy: FaultyApi;
  let proxy: FaultProxy;
  let faulty: TestApi;
  let tables: DynamoDBDocumentClient;
  beforeAll(async () => {
    behindProxy = await startFaultyApi({ devApiKey: DEV_KEY });
    ({ proxy, api: faulty, tables } = behindProxy);
  });
  afterAll(async () => {
    await behindProxy?.close();
  });

  it('retries a create answered 503 with the same Idempotency-Key, passes, and leaves one pet', async () => {
    // Every SDK attempt's answer lost: the pet is written, the API answers 503.
    proxy.inject({ fault: 'lose-response', operation: 'PutItem', table: LOCAL_TABLES.pets, times: 3 });
    const result = await smoke(['--base-url', faulty.baseUrl, '--key', DEV_KEY]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(stepLines(result.stdout)[2]).toMatch(/^PASS {2}3\/5 .*, after retrying 503;/);
    expect(await storedPets(tables)).toHaveLength(1);
  });

  it('with --local, finds the store by DYNAMODB_ENDPOINT, as npm start does, and issues its key there', async () => {
    const keys = new DynamoApiKeyStore(tables, LOCAL_TABLES.apiKeys);
    const [keysBefore, petsBefore] = [(await keys.list()).map((record) => record.keyId), await storedPets(tables)];
    const result = await smoke(['--local'], { PORT: String(faulty.port), DYNAMODB_ENDPOINT: faulty.dynamoDbEndpoint, DYNAMODB_PORT: '' });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain(`its DynamoDB at ${faulty.dynamoDbEndpoint} (DYNAMODB_ENDPOINT)\n`);
    expect(stepLines(result.stdout).filter((line) => line.startsWith('PASS'))).toHaveLength(STEPS + 1);
    // The store behind the proxy holds the key it issued, revoked, and no pet it created.
    const issued = (await keys.list()).filter((record) => !keysBefore.includes(record.keyId));
    expect(issued).toEqual([expect.objectContaining({ name: 'npm run smoke --local', revokedAt: expect.any(String) })]);
    expect(await storedPets(tables)).toEqual(petsBefore);
  });
});

describe('npm run smoke against a stage that does not answer', () => {
  it('fails every step, naming it, when nothing listens at the base URL', async () => {
    const result = await smoke(['--base-url', `http://127.0.0.1:${CLOSED_PORT}/v1`, '--key', DEV_KEY]);
    expect(result.code).toBe(1);
    const lines = stepLines(result.stdout);
    expect(lines).toHaveLength(STEPS);
    for (const [index, line] of lines.entries()) expect(line).toMatch(new RegExp(`^FAIL {2}${index + 1}/${STEPS} `));
    expect(lines[0]).toContain('ECONNREFUSED');
    expect(result.stdout).toContain(`0 of ${STEPS} steps passed.`);
  });

  it('fails a step that gets no answer within its time budget', async () => {
    const blackHole = await startBlackHole();
    try {
      const started = Date.now();
      const result = await smoke(['--base-url', blackHole.endpoint, '--key', DEV_KEY, '--timeout', '0.3']);
      expect(result.code).toBe(1);
      expect(stepLines(result.stdout)[0]).toMatch(/^FAIL {2}1\/5 .*: no answer within 0\.3 s from http:\/\/127\.0\.0\.1:\d+\/v1\/pets$/);
      // Four steps that wait (the fourth needs the third's pet): each ends at its budget, not later.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await blackHole.close();
    }
  });
});

describe('npm run smoke with bad input', () => {
  it.each([
    ['no key', ['--base-url', 'http://localhost:3000/v1'], '--key <api key> or SMOKE_API_KEY'],
    ['no base URL', ['--key', DEV_KEY], '--stage <name>, --local, or --base-url <url>'],
    ['a base URL without a scheme', ['--base-url', 'localhost:3000', '--key', DEV_KEY], 'must be an http or https URL'],
    ['a base URL that is not a URL', ['--base-url', 'my stage', '--key', DEV_KEY], 'must be an http(s) URL'],
    ['a base URL with a query', ['--base-url', 'http://localhost:3000/v1?x=1', '--key', DEV_KEY], 'without credentials, query or fragment'],
    ['a timeout that is not a number', ['--base-url', 'http://localhost:3000', '--key', DEV_KEY, '--timeout', 'soon'], '--timeout must be'],
  ])('refuses %s, saying what to give, with exit code 2', async (_, args, message) => {
    const result = await smoke(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stdout).toBe('');
  });
});
