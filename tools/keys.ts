import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoApiKeyStore } from '../shared/dynamodb/dynamo-api-key-store';
import { inspect } from 'node:util';
import { keyStateAt, type ApiKeyRecord } from '../shared/domain/auth/api-key-store';
import { issueApiKey } from '../shared/domain/auth/manage-api-keys';
import { stages } from '../infra/stages';
import { findLocalStore, findOrExit } from '../local/addresses';
import { createLocalClient, LOCAL_TABLES } from '../local/dynamodb-local';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { messageOf } from '../shared/runtime/error-message';
import { parseCommandLine, showUsage, usageFailure } from './command-line';
import { findDeployedStage, lookUpOrExit, requireOutput } from './deployed-stage';

/** The columns of `keys list`, in order: its lines and its usage are both made from them. */
const LIST_COLUMNS: readonly {
  readonly heading: string;
  readonly value: (record: ApiKeyRecord, now: number) => string;
  readonly width?: number;
}[] = [
  { heading: 'id', value: (record) => record.keyId },
  { heading: 'created', value: (record) => record.createdAt },
  { heading: 'state (active, revoked, expired or refused)', value: (record, now) => stateOf(record, now), width: 38 },
  { heading: 'name', value: (record) => record.name },
];

// `npm run keys`: the store is always named (--local, --stage or --table), never guessed: a key in the wrong
// store silently fails, or works where it should not.
const usage = `Usage: npm run keys -- <command> <where> [options]

Commands:
  create --name <name>   issue a key; it is printed once and stored only as a hash
  list                   list keys (${LIST_COLUMNS.map((column) => column.heading).join(', ')}), never the keys themselves
  revoke <keyId>         revoke a key; the API rejects it within 60 seconds

Where (exactly one):
  --local                the running npm start's store, found by its settings (DYNAMODB_PORT, DYNAMODB_ENDPOINT) or --endpoint <url>
  --stage <name>         a deployed stage (${stages.map((stage) => stage.name).join(', ')}): its keys table and region come
                         from the stack's outputs; needs credentials for the stage's account
                         (AWS_PROFILE) allowed by the stack's KeyAdministrationPolicyArn policy
  --table <name>         a keys table named directly (stack output ApiKeysTableName),
    --region <region>    in this region, for operators who may not read the stack`;

const { values: options, positionals } = parseCommandLine(
  {
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      local: { type: 'boolean' },
      stage: { type: 'string' },
      table: { type: 'string' },
      region: { type: 'string' },
      endpoint: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  },
  usage,
);
const [command, keyId] = positionals;

const fail: (message: string) => never = usageFailure(usage);

if (command === undefined) showUsage(usage, 2);

async function resolveTarget() {
  const chosen = [options.local && '--local', options.stage !== undefined && '--stage', options.table !== undefined && '--table'].filter(
    Boolean,
  );
  if (chosen.length === 0) {
    fail('Say which store: --local for the running npm start, or --stage <name> for a deployed stage (or --table with --region).');
  }
  if (chosen.length > 1) fail(`Choose one store, not ${chosen.join(' and ')}.`);
  if (options.local) {
    const store = findOrExit(findLocalStore, options.endpoint);
    return {
      client: createLocalClient(store.url, { maxAttempts: 2 }),
      table: LOCAL_TABLES.apiKeys,
      where: `the local API's DynamoDB at ${store.told}`,
      unreachable: (reason: string) => `Could not reach the local API's DynamoDB at ${store.told}: ${reason}. Is npm start running?`,
    };
  }
  if (options.stage !== undefined) {
    const deployed = await findDeployedStage(options.stage, 'KeyAdministrationPolicyArn');
    const table = requireOutput(deployed, 'ApiKeysTableName');
    return {
      client: new DynamoDBClient({ region: deployed.stage.region, maxAttempts: 2 }),
      table,
      where: `the ${deployed.stage.name} stage (table ${table}, ${deployed.stage.region})`,
      unreachable: (reason: string) => `Could not use the ${deployed.stage.name} stage's keys table ${table}: ${reason}`,
    };
  }
  if (options.region === undefined) fail('--table needs --region: the region of that table.');
  return {
    client: new DynamoDBClient({ region: options.region, maxAttempts: 2, ...(options.endpoint ? { endpoint: options.endpoint } : {}) }),
    table: options.table!,
    where: `table ${options.table} (${options.region})`,
    unreachable: (reason: string) => `Could not use table ${options.table}: ${reason}`,
  };
}

const { client, table, where, unreachable } = await lookUpOrExit(resolveTarget);
const store = new DynamoApiKeyStore(documentClientOver(client), table);

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
      // Every row judged at one moment, so the listing shows the keys as they stood at one instant.
      const now = Date.now();
      for (const record of records) {
        process.stdout.write(`${LIST_COLUMNS.map((column) => column.value(record, now).padEnd(column.width ?? 0)).join('  ')}\n`);
      }
      break;
    }
    case 'revoke': {
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
  process.stderr.write(`${unreachable(messageOf(error))}\n`);
  process.exitCode = 1;
} finally {
  client.destroy();
}

/** Whether a key still works, as the authorizer judges it: revoked, past its expiry (a check key's), refused for an expiry it cannot read, or active. */
function stateOf(record: ApiKeyRecord, now: number): string {
  switch (keyStateAt(record, now)) {
    case 'revoked':
      return `revoked ${record.revokedAt}`;
    case 'expired':
      return `expired ${record.expiresAt}`;
    case 'malformed-expiry':
      // As stored, whatever its type: a list or a number is not mistaken for a date.
      return `refused: malformed expiry ${inspect(record.expiresAt, { breakLength: Number.POSITIVE_INFINITY })}`;
    case 'active':
      return record.expiresAt === undefined ? 'active' : `active until ${record.expiresAt}`;
  }
}
