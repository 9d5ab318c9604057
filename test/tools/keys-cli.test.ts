import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { production, staging } from '../../infra/stages';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { API_KEYS_TABLE } from '../../shared/dynamodb/api-keys-table';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { runCli } from '../helpers/cli';
import { snapshotEnv } from '../helpers/env';
import { startFakeCloudFormation, type FakeCloudFormation } from '../helpers/fake-cloudformation';
import { startTestApi, type TestApi } from '../helpers/local-api';

/**
 * `npm run keys` against a "deployed" stage, without AWS: a fake CloudFormation answers DescribeStacks
 * with outputs naming the keys table of a running local API, whose dynalite stands in for DynamoDB.
 */
let api: TestApi;
let cloudFormation: FakeCloudFormation;
let restoreEnv: () => void;
let aws: Record<string, string>;

beforeAll(async () => {
  restoreEnv = snapshotEnv();
  api = await startTestApi();
  cloudFormation = await startFakeCloudFormation([
    { stackName: staging.stackName, account: staging.account, region: staging.region, outputs: { ApiKeysTableName: LOCAL_TABLES.apiKeys } },
    // A production stack deployed where production does not live.
    { stackName: production.stackName, account: '999999999999', region: production.region, outputs: { ApiKeysTableName: 'elsewhere' } },
  ]);
  aws = {
    AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: api.dynamoDbEndpoint,
    AWS_ACCESS_KEY_ID: 'operator',
    AWS_SECRET_ACCESS_KEY: 'operator',
    AWS_REGION: 'us-west-2', // the stage's own region must win over the caller's default
  };
});
afterAll(async () => {
  await cloudFormation?.close();
  await api?.close();
  restoreEnv?.();
});

const keys = (args: string[], env: Record<string, string> = aws) => runCli('tools/keys.ts', args, env);

/** Issues a key in the API's table, then writes its expiry as given, whatever its type, as a hand edit could. */
async function issueKeyExpiring(expiresAt: unknown) {
  const issued = await issueApiKey(new DynamoApiKeyStore(api.documents, LOCAL_TABLES.apiKeys), `expiring ${JSON.stringify(expiresAt)}`);
  await api.documents.send(
    new UpdateCommand({
      TableName: LOCAL_TABLES.apiKeys,
      Key: { [API_KEYS_TABLE.partitionKey]: issued.record.keyHash },
      UpdateExpression: 'SET expiresAt = :expiresAt',
      ExpressionAttributeValues: { ':expiresAt': expiresAt },
    }),
  );
  return issued;
}

describe('npm run keys', () => {
  it('refuses to guess the store, and says what to pass', async () => {
    const result = await keys(['list'], {});
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--local');
    expect(result.stderr).toContain('--stage');
  });

  it('answers an unknown option with what is wrong and the usage, exit 2, not a stack trace', async () => {
    const result = await keys(['list', '--local', '--stages', 'staging']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Unknown option '--stages'.*\n\nUsage: npm run keys/s);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses two stores at once', async () => {
    const result = await keys(['list', '--local', '--stage', 'staging']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Choose one store');
  });

  it('lists the known stages when given an unknown one', async () => {
    const result = await keys(['list', '--stage', 'prod']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`the stages are ${staging.name}, ${production.name}`);
  });

  it("creates a key in a deployed stage's table, found from its stack's outputs in the stage's region, and the key works", async () => {
    const result = await keys(['create', '--stage', 'staging', '--name', 'stage operator']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`the staging stage (table ${LOCAL_TABLES.apiKeys}, ${staging.region})`);
    expect(cloudFormation.requests.at(-1)).toBe(staging.stackName);
    const apiKey = /\b(pets_[\w-]{43})\b/.exec(result.stdout)?.[1];
    expect((await api.request('/pets', { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  });

  it.each([
    ['junk 2099', "'junk 2099'"],
    ['2099', "'2099'"],
    [[2099], '[ 2099 ]'],
  ])('lists a key whose expiry is %j as refused for a malformed expiry, never active, and the API refuses it', async (expiresAt, shown) => {
    const { apiKey, record } = await issueKeyExpiring(expiresAt);

    const result = await keys(['list', '--stage', 'staging']);
    expect(result.code, result.stderr).toBe(0);
    const line = result.stdout.split('\n').find((candidate) => candidate.startsWith(record.keyId));
    expect(line).toContain(`refused: malformed expiry ${shown}`);
    expect(line).not.toContain('active');
    expect((await api.request('/pets', { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(401);
  });

  it('lists a key whose expiry is an instant ahead as active until then', async () => {
    const { record } = await issueKeyExpiring('2099-01-01T00:00:00.000Z');
    const result = await keys(['list', '--stage', 'staging']);
    expect(result.stdout.split('\n').find((candidate) => candidate.startsWith(record.keyId))).toContain(
      'active until 2099-01-01T00:00:00.000Z',
    );
  });

  it('lists the columns in its usage that a list line has, in their order', async () => {
    const { record } = await issueKeyExpiring('2099-01-01T00:00:00.000Z');
    const help = await keys(['--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(
      /^ {2}list +list keys \(id, created, state \(active, revoked, expired or refused\), name\), never the keys themselves$/m,
    );
    const line = (await keys(['list', '--stage', 'staging'])).stdout.split('\n').find((candidate) => candidate.startsWith(record.keyId));
    expect(line?.split(/ {2,}/)).toEqual([record.keyId, record.createdAt, 'active until 2099-01-01T00:00:00.000Z', record.name]);
  });

  it("refuses a stage whose stack answers from another account than the stage's", async () => {
    const result = await keys(['list', '--stage', 'production']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`lives in account ${production.account}`);
  });

  it('says which account to use when the stack is not there for these credentials', async () => {
    const gone = await startFakeCloudFormation([]);
    try {
      const result = await keys(['list', '--stage', 'staging'], { ...aws, AWS_ENDPOINT_URL_CLOUDFORMATION: gone.endpoint });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`No stack ${staging.stackName} in ${staging.region}`);
      expect(result.stderr).toContain(staging.account);
    } finally {
      await gone.close();
    }
  });

  it.each([
    ['DYNAMODB_PORT', () => ({ DYNAMODB_PORT: new URL(api.dynamoDbEndpoint).port })],
    ['DYNAMODB_ENDPOINT', () => ({ DYNAMODB_ENDPOINT: api.dynamoDbEndpoint, DYNAMODB_PORT: '' })],
  ])('with --local, finds the store by %s, as npm start does, says where, and the key works there', async (setting, env) => {
    const result = await keys(['create', '--local', '--name', `found by ${setting}`], env());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`in the local API's DynamoDB at ${api.dynamoDbEndpoint} (${setting}).`);
    const apiKey = /\b(pets_[\w-]{43})\b/.exec(result.stdout)?.[1];
    expect((await api.request('/pets', { headers: { authorization: `Bearer ${apiKey}` } })).status).toBe(200);
  });

  it('needs --region with --table', async () => {
    const result = await keys(['list', '--table', 'some-table']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--table needs --region');
  });
});
