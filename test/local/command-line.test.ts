import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynalite, type LocalDynamoDb } from '../../local/dynamodb-local';
import { runCli, startServerProcess, type RunningServer } from '../helpers/cli';
import { startServerInProcess } from '../helpers/server-in-process';
import { CLOSED_PORT } from '../../local/addresses';
import { documentClient } from '../helpers/local-api';
import { petStore } from '../helpers/pets';
import { createLocalClient, LOCAL_TABLES } from '../../local/dynamodb-local';
import type { ApiKeyRecord } from '../../shared/domain/auth/api-key-store';
import { generateApiKey, generateKeyId, hashApiKey } from '../../shared/domain/auth/api-keys';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';

describe('npm start', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServerProcess({ DEV_API_KEY: 'readme-dev-key-0123456789' });
  });
  afterAll(() => server?.stop());

  it('prints the base URL ending in /v1 and the key from DEV_API_KEY', () => {
    expect(server.baseUrl).toMatch(/^http:\/\/localhost:\d+\/v1$/);
    expect(server.apiKey).toBe('readme-dev-key-0123456789');
  });

  it('prints where the API reference is, and serves it and the OpenAPI document without a key', async () => {
    expect(server.docsUrl).toBe(server.baseUrl.replace(/\/v1$/, '/docs'));
    const page = await fetch(server.docsUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('swagger-ui-bundle.js');
    const document = (await (await fetch(server.docsUrl.replace(/\/docs$/, '/openapi.json'))).json()) as {
      servers: Array<{ url: string }>;
    };
    expect(document.servers[0]?.url).toBe(server.baseUrl);
  });

  it('serves the API to a client sending that key', async () => {
    const response = await fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([]);
  });

  it('writes one JSON access-log line per request, without the key', async () => {
    await fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    const accessLines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{"requestId"'));
    expect(accessLines.length).toBeGreaterThan(0);
    expect(JSON.parse(accessLines.at(-1)!)).toMatchObject({ httpMethod: 'GET', path: '/v1/pets', status: 200 });
    const logLines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(logLines.join('\n')).not.toContain(server.apiKey);
  });

  describe('npm run keys', () => {
    const keys = (...args: string[]) => runCli('tools/keys.ts', [...args, '--local'], { DYNAMODB_PORT: server.dynamoDbPort });

    it('creates a key that the running API accepts, lists it, and revokes it', async () => {
      const created = await keys('create', '--name', 'integration test');
      expect(created.code).toBe(0);
      const apiKey = /\b(pets_[\w-]{43})\b/.exec(created.stdout)?.[1];
      const keyId = /\b(key_[0-9a-f]{16})\b/.exec(created.stdout)?.[1];
      expect(apiKey).toBeDefined();
      const call = () => fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${apiKey}` } });
      expect((await call()).status).toBe(200);

      const listed = await keys('list');
      expect(listed.stdout).toMatch(new RegExp(`${keyId}.*active.*integration test`));
      expect(listed.stdout).not.toContain(apiKey);

      const revoked = await keys('revoke', keyId!);
      expect(revoked.code).toBe(0);
      expect((await keys('list')).stdout).toMatch(new RegExp(`${keyId}.*revoked`));
    });

    it('lists a check key as active until its expiry, and one past it as expired, as the authorizer judges them', async () => {
      const client = createLocalClient(`http://127.0.0.1:${server.dynamoDbPort}`);
      try {
        const store = new DynamoApiKeyStore(documentClientOver(client), LOCAL_TABLES.apiKeys);
        const key = (name: string, expiresInMs: number): ApiKeyRecord => ({
          keyId: generateKeyId(),
          keyHash: hashApiKey(generateApiKey()),
          name,
          createdAt: new Date().toISOString(),
          expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
        });
        const [expiring, expired] = [key('expires later', 60 * 60_000), key('expired already', -1_000)];
        await store.add(expiring);
        await store.add(expired);
        const listed = (await keys('list')).stdout;
        expect(listed).toMatch(new RegExp(`${expiring.keyId}.*active until ${expiring.expiresAt}.*expires later`));
        expect(listed).toMatch(new RegExp(`${expired.keyId}.*expired ${expired.expiresAt}.*expired already`));
      } finally {
        client.destroy();
      }
    });

    it('says so, and fails, when revoking a key that does not exist', async () => {
      const result = await keys('revoke', 'key_0000000000000000');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('No key key_0000000000000000');
    });

    it('requires a name to create a key', async () => {
      const result = await keys('create');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--name');
    });
  });
});

describe('npm start with DYNAMODB_ENDPOINT', () => {
  let dynamoDb: LocalDynamoDb;
  let server: RunningServer;
  beforeAll(async () => {
    dynamoDb = await startDynalite({ port: 0 });
    server = await startServerProcess({ DYNAMODB_ENDPOINT: dynamoDb.endpoint });
  });
  afterAll(async () => {
    await server?.stop();
    await dynamoDb?.close();
  });

  it('keeps its pets in that DynamoDB, creating the tables there, instead of starting its own', async () => {
    expect(server.output()).toContain(`the DynamoDB at ${dynamoDb.endpoint} (DYNAMODB_ENDPOINT)`);
    const response = await fetch(`${server.baseUrl}/pets`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Kept elsewhere', categoryId: 1 }),
    });
    expect(response.status).toBe(201);
    const { id } = (await response.json()) as { id: number };
    const stored = await petStore(documentClient({ dynamoDbEndpoint: dynamoDb.endpoint })).get(id);
    expect(stored).toMatchObject({ id, name: 'Kept elsewhere' });
  });

  it.each([
    ['not a URL', '127.0.0.1 port 8000', 'DYNAMODB_ENDPOINT must be a URL'],
    ['not http', 'ftp://127.0.0.1:8000', 'DYNAMODB_ENDPOINT must be an http or https URL'],
  ])('refuses an endpoint that is %s, naming the setting', async (_, value, message) => {
    const result = await startServerInProcess({ DYNAMODB_ENDPOINT: value });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
  });
});

describe('npm start with a setting it or a function would refuse', () => {
  /** The lines npm start wrote to say why it did not start. */
  const refusals = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('Could not start the local API: '));
  // In this process through its seam (startServer); spawned where the process is the behaviour: an unknown option's exit
  // status without a stack trace, and a function's setting that reaches it from the shell's environment.
  const start = startServerInProcess;
  const startProcess = (env: Record<string, string>) => runCli('local/server.ts', [], { PORT: '0', DYNAMODB_PORT: '0', ...env });

  it.each([
    ['CURSOR_SECRET', 'too-short-a-secret', 'must be at least 32 characters'],
    ['POWERTOOLS_LOG_LEVEL', 'verbose', 'must be one of DEBUG, INFO, WARN, ERROR, SILENT, TRACE, CRITICAL'],
  ])('exits 1 at start, before serving, with one line naming %s and its rule', async (variable, value, rule) => {
    const result = await startProcess({ [variable]: value });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([`Could not start the local API: ${variable} ${rule}`]);
    expect(result.stdout).not.toContain('Animal store API');
  });

  it('names every variable it refuses, each on a line of its own', async () => {
    const result = await startProcess({ CURSOR_SECRET: 'x'.repeat(31), POWERTOOLS_LOG_LEVEL: 'verbose', DEV_API_KEY: 'short' });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([
      expect.stringContaining('DEV_API_KEY must be 16 to 512 characters'),
      expect.stringContaining('POWERTOOLS_LOG_LEVEL must be one of'),
      expect.stringContaining('CURSOR_SECRET must be at least 32 characters'),
    ]);
  });

  it('refuses a function setting given in the shell, which the local stage would replace, naming ENV_VARS', async () => {
    const result = await start({ PETS_LISTING_SHARDS: '8', PETS_TABLE_NAME: 'elsewhere' });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([
      expect.stringMatching(/^Could not start the local API: PETS_TABLE_NAME is set in the shell, .*ENV_VARS file/),
      expect.stringMatching(/^Could not start the local API: PETS_LISTING_SHARDS is set in the shell, .*ENV_VARS file/),
    ]);
    expect(result.stdout).not.toContain('Animal store API');
  });

  it('names every setting of its own it refuses at once', async () => {
    const result = await start({ PORT: 'eighty', DYNAMODB_PORT: '70000', CORS_ALLOW_ORIGINS: 'not an origin' });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([
      expect.stringContaining('CORS_ALLOW_ORIGINS must list origins'),
      expect.stringContaining('PORT must be a port number, got "eighty"'),
      expect.stringContaining('DYNAMODB_PORT must be a port number, got "70000"'),
    ]);
  });

  it('names an unknown option, not a stack trace', async () => {
    const result = await runCli('local/server.ts', ['--wach'], { PORT: '0', DYNAMODB_PORT: '0' });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([expect.stringContaining("Unknown option '--wach'")]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('names HOST when it is no address this machine can listen on', async () => {
    const result = await start({ HOST: 'no-such-host.invalid' });
    expect(result.code).toBe(1);
    expect(refusals(result.stderr)).toEqual([expect.stringContaining('HOST must be an address of this machine')]);
  });

  it('starts with a cursor secret of exactly 32 characters', async () => {
    const server = await startServerProcess({ CURSOR_SECRET: 'x'.repeat(32) });
    try {
      const response = await fetch(`${server.baseUrl}/pets`, { headers: { authorization: `Bearer ${server.apiKey}` } });
      expect(response.status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

describe('npm start on a port already in use', () => {
  /** A port something else listens on, until `release`. */
  async function takePort(): Promise<{ port: number; release: () => void }> {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    return { port: (taken.address() as AddressInfo).port, release: () => taken.close() };
  }

  it.each(['PORT', 'DYNAMODB_PORT'])('fails, naming %s as the setting to change', async (setting) => {
    const { port, release } = await takePort();
    try {
      const result = await startServerInProcess({ [setting]: String(port) });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`Port ${port} is in use: set ${setting} to a free port.`);
    } finally {
      release();
    }
  });

  it("names both when the API's and the store's are taken, at once", async () => {
    const [api, store] = [await takePort(), await takePort()];
    try {
      const result = await startServerInProcess({ PORT: String(api.port), DYNAMODB_PORT: String(store.port) });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `Could not start the local API: Port ${api.port} is in use: set PORT to a free port.`,
        `Could not start the local API: Port ${store.port} is in use: set DYNAMODB_PORT to a free port.`,
      ]);
    } finally {
      api.release();
      store.release();
    }
  });
});

describe('npm run keys without a running API', () => {
  it('asks whether npm start is running', async () => {
    const result = await runCli('tools/keys.ts', ['list', '--local'], { DYNAMODB_PORT: String(CLOSED_PORT) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Is npm start running?');
  });
});
