import { setTimeout } from 'node:timers/promises';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  type CreateTableCommandInput,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, type BatchWriteCommandInput, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import { API_KEYS_TABLE } from '../shared/dynamodb/api-keys-table';
import { ENV } from '../shared/facts/environment';
import { IDEMPOTENCY_TABLE } from '../shared/dynamodb/idempotency-table';
import { metricsNamespace } from '../shared/facts/metric-names';
import { PETS_TABLE } from '../shared/dynamodb/pets-table';
import { LISTING, writeShardsOf } from '../shared/facts/listing';
import { describeIndexRepairs, repairIndexes } from './index-repair';
import { listen } from './listen';

/** Table names of the local stage; a deployed stage gets CloudFormation-generated names instead. */
export const LOCAL_TABLES = {
  pets: 'animal-store-local-pets',
  apiKeys: 'animal-store-local-api-keys',
  idempotency: 'animal-store-local-idempotency',
} as const;

export type TableNames = { readonly [table in keyof typeof LOCAL_TABLES]: string };

export const DEFAULT_DYNAMODB_PORT = 4567;
/** The embedded DynamoDB listens on loopback only. */
export const DYNALITE_HOST = '127.0.0.1';

export interface LocalDynamoDb {
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * Starts dynalite on loopback: in memory, or persisted in `dataDir`, whose indexes are first repaired
 * from their items, since a crash may leave them disagreeing (./index-repair.ts).
 */
export async function startDynalite(options: {
  port: number;
  dataDir?: string;
  onIndexRepair?: (message: string) => void;
}): Promise<LocalDynamoDb> {
  if (options.dataDir !== undefined) {
    const repairs = await repairIndexes(options.dataDir);
    if (repairs.length > 0) options.onIndexRepair?.(describeIndexRepairs(repairs));
  }
  const server = dynalite({ path: options.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const port = await listen(server, options.port, DYNALITE_HOST, 'DYNAMODB_PORT');
  return {
    endpoint: `http://${DYNALITE_HOST}:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections?.();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** The tables as infra/ defines them: same keys and indexes, so queries behave as on AWS. */
export function tableDefinitions(names: TableNames = LOCAL_TABLES): CreateTableCommandInput[] {
  const { allPetsIndex, byStatusIndex } = PETS_TABLE;
  const petsIndexes = [allPetsIndex, byStatusIndex];
  return [
    {
      TableName: names.pets,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: PETS_TABLE.partitionKey, AttributeType: 'N' },
        { AttributeName: allPetsIndex.partitionKey, AttributeType: 'S' },
        ...petsIndexes.slice(1).map((index) => ({ AttributeName: index.partitionKey, AttributeType: 'S' as const })),
        { AttributeName: allPetsIndex.sortKey, AttributeType: 'S' },
      ],
      KeySchema: [{ AttributeName: PETS_TABLE.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: petsIndexes.map((index) => ({
        IndexName: index.name,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    },
    {
      TableName: names.apiKeys,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [
        { AttributeName: API_KEYS_TABLE.partitionKey, AttributeType: 'S' },
        { AttributeName: API_KEYS_TABLE.byKeyIdIndex.partitionKey, AttributeType: 'S' },
      ],
      KeySchema: [{ AttributeName: API_KEYS_TABLE.partitionKey, KeyType: 'HASH' }],
      GlobalSecondaryIndexes: [
        {
          IndexName: API_KEYS_TABLE.byKeyIdIndex.name,
          KeySchema: [{ AttributeName: API_KEYS_TABLE.byKeyIdIndex.partitionKey, KeyType: 'HASH' }],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ],
    },
    {
      // dynalite has no TTL: expired records stay, and the idempotency store's condition and checks
      // treat them as absent, as they must on AWS between expiry and TTL's deletion.
      TableName: names.idempotency,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: IDEMPOTENCY_TABLE.partitionKey, KeyType: 'HASH' }],
    },
  ];
}

/**
 * Creates the tables unless they exist, and returns once every one is ACTIVE: dynalite, like DynamoDB,
 * refuses requests to a table still CREATING.
 */
export async function ensureTables(client: DynamoDBClient, names: TableNames = LOCAL_TABLES): Promise<void> {
  const tables = tableDefinitions(names);
  for (const table of tables) {
    try {
      await client.send(new CreateTableCommand(table));
    } catch (error) {
      if (!(error instanceof ResourceInUseException)) throw error;
    }
  }
  for (const { TableName } of tables) {
    while ((await client.send(new DescribeTableCommand({ TableName }))).Table?.TableStatus !== 'ACTIVE') {
      await setTimeout(10);
    }
  }
}

/** The stage name of everything local: its metrics go to the `AnimalStore/local` namespace. */
export const LOCAL_STAGE_NAME = 'local';

/** dynalite accepts any credentials and region; these spare a developer any AWS configuration. */
const LOCAL_REGION = 'us-east-1';
const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** A client of a local DynamoDB, for tools and tests that talk to it directly. */
export function createLocalClient(endpoint: string, config: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, ...config });
}

/** One put or delete of a BatchWriteItem, as the document client takes it. */
export type WriteRequest = NonNullable<BatchWriteCommandInput['RequestItems']>[string][number];

/**
 * Sends the requests with BatchWriteItem, 25 (its limit) at a time and `parallel` batches in flight,
 * sending again whatever a batch leaves unprocessed: how the tools and tests fill and empty tables fast.
 */
export async function writeInBatches(
  client: DynamoDBDocumentClient,
  tableName: string,
  requests: readonly WriteRequest[],
  parallel = 1,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const start = next;
      next += 25;
      let batch = requests.slice(start, next);
      while (batch.length > 0) {
        const { UnprocessedItems } = await client.send(new BatchWriteCommand({ RequestItems: { [tableName]: batch } }));
        batch = UnprocessedItems?.[tableName] ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
}

/** What points an AWS SDK client at the local DynamoDB, with throwaway credentials: environment variables the SDK reads. */
export function localDynamoDbEnvironment(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  };
}

/**
 * What the local stage sets on its functions besides their DynamoDB endpoint, as the CDK stack sets
 * the deployed ones': table names, cursor secret, the listing every stage runs, and metrics namespace.
 */
export function localStageVariables(cursorSecret: string): Record<string, string> {
  return {
    [ENV.petsTable]: LOCAL_TABLES.pets,
    [ENV.apiKeysTable]: LOCAL_TABLES.apiKeys,
    [ENV.idempotencyTable]: LOCAL_TABLES.idempotency,
    [ENV.cursorSecret]: cursorSecret,
    [ENV.listingShards]: String(LISTING.shards),
    [ENV.writeShards]: String(writeShardsOf(LISTING)),
    [ENV.metricsNamespace]: metricsNamespace(LOCAL_STAGE_NAME),
  };
}

/**
 * Creates the local stage's tables and returns the environment its functions get, as the CDK stack
 * gives the deployed ones theirs; this process's own environment is left alone.
 */
export async function prepareLocalStage(endpoint: string, cursorSecret: string): Promise<Record<string, string>> {
  const client = createLocalClient(endpoint);
  try {
    await ensureTables(client, LOCAL_TABLES);
  } finally {
    client.destroy();
  }
  return { ...localDynamoDbEnvironment(endpoint), ...localStageVariables(cursorSecret) };
}
