import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoApiKeyStore } from '../shared/auth/dynamo-api-key-store';
import { issueApiKey } from '../shared/auth/manage-api-keys';
import { createLocalClient, DEFAULT_DYNAMODB_PORT, LOCAL_TABLES } from '../local/dynamodb-local';

/**
 * `npm run keys -- <command>`: issue, list and revoke API keys. Without --table it manages the
 * running local API's keys; with --table it manages a deployed stage's keys table (its name is the
 * stack output ApiKeysTableName) using your usual AWS credentials.
 */
const usage = `Usage: npm run keys -- <command> [options]

Commands:
  create --name <name>   issue a key; it is printed once and stored only as a hash
  list                   list keys (id, name, created, revoked), never the keys themselves
  revoke <keyId>         revoke a key; the API rejects it within 60 seconds

Options:
  --table <name>         a deployed stage's keys table (stack output ApiKeysTableName)
  --region <region>      its AWS region (default: AWS_REGION / your AWS profile)
  --endpoint <url>       a DynamoDB endpoint (default for local: http://127.0.0.1:$DYNAMODB_PORT, ${DEFAULT_DYNAMODB_PORT})`;

const { values: options, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: 'string' },
    table: { type: 'string' },
    region: { type: 'string' },
    endpoint: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
const [command, ...rest] = positionals;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${usage}\n`);
  process.exit(2);
}

if (options.help || command === undefined) {
  process.stdout.write(`${usage}\n`);
  process.exit(options.help ? 0 : 2);
}

const local = options.table === undefined;
const endpoint = options.endpoint ?? (local ? `http://127.0.0.1:${process.env.DYNAMODB_PORT || DEFAULT_DYNAMODB_PORT}` : undefined);
const client =
  local && endpoint
    ? createLocalClient(endpoint, { maxAttempts: 2 })
    : new DynamoDBClient({ ...(endpoint ? { endpoint } : {}), ...(options.region ? { region: options.region } : {}), maxAttempts: 2 });
const store = new DynamoApiKeyStore(DynamoDBDocumentClient.from(client), options.table ?? LOCAL_TABLES.apiKeys);
const where = local ? `the local API (${endpoint})` : `table ${options.table}`;

try {
  switch (command) {
    case 'create': {
      if (!options.name?.trim()) fail('create needs --name <name>: who or what the key is for.');
      const { apiKey, record } = await issueApiKey(store, options.name.trim());
      process.stdout.write(
        `Created ${record.keyId} (${record.name}) in ${where}.\n\n  ${apiKey}\n\n` +
          'This is the only time the key is shown: store it in a secret manager now.\n',
      );
      break;
    }
    case 'list': {
      const records = await store.list();
      if (records.length === 0) process.stdout.write(`No keys in ${where}.\n`);
      for (const record of records) {
        const state = record.revokedAt ? `revoked ${record.revokedAt}` : 'active';
        process.stdout.write(`${record.keyId}  ${record.createdAt}  ${state.padEnd(32)}  ${record.name}\n`);
      }
      break;
    }
    case 'revoke': {
      const [keyId] = rest;
      if (!keyId) fail('revoke needs the key id, e.g. npm run keys -- revoke key_0123456789abcdef');
      if (!(await store.revoke(keyId, new Date()))) {
        process.stderr.write(`No key ${keyId} in ${where}.\n`);
        process.exitCode = 1;
      } else {
        process.stdout.write(`Revoked ${keyId} in ${where}; the API rejects it within 60 seconds.\n`);
      }
      break;
    }
    default:
      fail(`Unknown command "${command}".`);
  }
} catch (error) {
  const reason = error instanceof Error ? error.message : String(error);
  process.stderr.write(
    local
      ? `Could not reach the local API's DynamoDB at ${endpoint} (${reason}). Start it with npm start, or pass --table for a deployed stage.\n`
      : `Could not use ${where}: ${reason}\n`,
  );
  process.exitCode = 1;
} finally {
  client.destroy();
}
