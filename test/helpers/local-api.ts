import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startLocalApi, type LocalApi, type LocalApiOptions } from '../../local/local-api';
import { fetchDocumented } from './contract';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { createLocalClient, startDynalite } from '../../local/dynamodb-local';
import { startFaultProxy, type FaultProxy } from './fault-proxy';
import { CLOSED_PORT } from '../../local/addresses';

export interface TestApi extends LocalApi {
  /** fetch() against a path under the base URL, with the dev key unless `headers.authorization` is given. */
  request(path: string, init?: RequestInit & { anonymous?: boolean }): Promise<Response>;
  /** Creates a pet through the API and returns its body. */
  createPet(body: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** A DynamoDB document client on the API's own dynalite, to read the tables directly; closed with the API. */
  readonly documents: DynamoDBDocumentClient;
}

/**
 * A `functionEnvironment` that lays `environment` over every route function's (a fault behind a
 * working authorizer) and `everyFunction` over all of them, the authorizer's included.
 */
export function routeFunctionsOnly(
  environment: Readonly<Record<string, string>>,
  everyFunction: Readonly<Record<string, string>> = {},
): NonNullable<LocalApiOptions['functionEnvironment']> {
  return (name) => (name === 'authorizer' ? everyFunction : { ...everyFunction, ...environment });
}

/**
 * A `functionEnvironment` for a store outage behind a working authorizer: every route function's DynamoDB a closed
 * port, and `everyFunction` given to every function, the authorizer included (routeFunctionsOnly).
 */
export function storeOutage(everyFunction: Readonly<Record<string, string>> = {}): NonNullable<LocalApiOptions['functionEnvironment']> {
  return routeFunctionsOnly({ AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${CLOSED_PORT}` }, everyFunction);
}

/** Starts the local API on free ports with an in-memory store, as `npm start` does: the local stage as it ships. */
export async function startTestApi(options: Partial<LocalApiOptions> = {}): Promise<TestApi> {
  const api = await startLocalApi({ port: 0, dynamoDbPort: 0, ...options });
  const request: TestApi['request'] = (path, init = {}) => {
    const headers = new Headers(init.headers);
    if (!init.anonymous && !headers.has('authorization')) headers.set('authorization', `Bearer ${api.apiKey}`);
    // Every response the suites receive is checked against openapi.json, so a handler that drifts
    // from the document fails whatever the test itself asserts.
    return fetchDocumented(`${api.baseUrl}${path}`, { ...init, headers });
  };
  const documents = documentClient(api);
  return {
    ...api,
    async close() {
      documents.destroy();
      await api.close();
    },
    documents,
    request,
    async createPet(body) {
      const response = await request('/pets', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (response.status !== 201) throw new Error(`createPet failed: ${response.status} ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    },
  };
}

/** A DynamoDB document client on the test API's own dynalite. */
export function documentClient(api: Pick<TestApi, 'dynamoDbEndpoint'>): DynamoDBDocumentClient {
  const client = createLocalClient(api.dynamoDbEndpoint);
  return documentClientOver(client);
}

/** A test API whose functions reach dynalite through a fault-injecting proxy, and the tables read behind its back. */
export interface FaultyApi {
  readonly api: TestApi;
  readonly proxy: FaultProxy;
  /** The tables as dynalite holds them, not through the proxy: what a fault test asserts on. */
  readonly tables: DynamoDBDocumentClient;
  close(): Promise<void>;
}

/**
 * Starts dynalite, a fault proxy in front of it and a test API on the proxy (DYNAMODB_ENDPOINT, as a
 * developer can), so a test injects faults at the network and reads what the tables hold afterwards.
 */
export async function startFaultyApi(options: Partial<LocalApiOptions> = {}): Promise<FaultyApi> {
  const dynamoDb = await startDynalite({ port: 0 });
  const proxy = await startFaultProxy(dynamoDb.endpoint);
  const api = await startTestApi({ ...options, dynamoDbEndpoint: proxy.endpoint });
  const tables = documentClient({ dynamoDbEndpoint: dynamoDb.endpoint });
  return {
    api,
    proxy,
    tables,
    async close() {
      tables.destroy();
      await api.close();
      await proxy.close();
      await dynamoDb.close();
    },
  };
}
