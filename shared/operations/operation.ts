import type * as v from 'valibot';
import type { OperationChecks, RequestParts } from '../checks/check-requests';
import type { RequestPart, Route } from '../facts/routes';
import type { OperationVariable } from '../runtime/function-config';

/**
 * What makes an operation what it is, stated once in its own file beside the others
 * (shared/operations/<name>-operation.ts); its handler is functions/<name>.ts. Every table that covers
 * "every operation" derives from these: the route table and the checks the functions bundle are written
 * from them by `npm run generate` and `npm run dev` (local/operation-files.ts), since no function bundles this folder:
 * a memory size, a throttle, a permission or a sentence of the document stated here redeploys no code.
 */

/** The stages whose memory and throttles an entry states. */
export type StageName = 'staging' | 'production';

/** What API Gateway admits on one route before answering 429: a steady rate and a burst above it. */
export interface RouteThrottle {
  /** Steady-state requests per second. */
  readonly rateLimit: number;
  /** Requests admitted at once above the steady rate. */
  readonly burstLimit: number;
}

/** The tables of a stage, by the name their key designs (shared/dynamodb/) and the local stage use. */
export type TableName = 'pets' | 'apiKeys' | 'idempotency';

/** A DynamoDB action a function may call: Query on the table's indexes, the others on its items. */
export type TableAction = 'GetItem' | 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'Query';

/** A route as an operation states it: the route table's entry, under the operation's own name. */
export type OperationRoute = Omit<Route, 'operationId'> & { readonly operationId: string };

/**
 * A schema for each part of a request the route reads, none for a part it does not, and its success
 * response's, none for a 204's empty body: the very ones its handler parses with, which the OpenAPI
 * document and the tests read.
 */
export type RouteSchemas<TRoute extends OperationRoute = OperationRoute> = {
  readonly [TPart in TRoute['reads'][number]]: v.GenericSchema;
} & (TRoute['successStatus'] extends 204 ? unknown : { readonly response: v.GenericSchema });

/**
 * How an operation answers when the store fails it (docs/reliability.md). test/api/store-faults.test.ts and
 * test/api/store-answer-faults.test.ts send every operation its request, break the call named here at the
 * network, and hold its answer and what the tables hold afterwards to this.
 */
export type StoreFaultBehaviour<TRoute extends OperationRoute = OperationRoute> = {
  /** The store call the faults break: the one whose answer the operation's own answer waits on. */
  readonly call: { readonly table: TableName; readonly action: TableAction };
  /**
   * What the request leaves in the tables once its call reached the store, however often the SDK retried
   * it: a retry finds its own earlier write, so a create leaves exactly one pet.
   */
  readonly writes: 'nothing' | 'one pet';
  /** Its answer when the call's answer is lost and the SDK's retry is answered: the success, as if nothing was lost. */
  readonly lostAnswer: TRoute['successStatus'];
  /**
   * Its answer when the store refuses connections, never answers, throttles or breaks every answer: an
   * outage a client retries, never a verdict on its request.
   */
  readonly failingStore: 'service_unavailable';
} & ('body' extends TRoute['reads'][number]
  ? {
      /** The body of the request the suites send, one its schema accepts; each path parameter names a pet stored just before. */
      readonly body: Readonly<Record<string, unknown>>;
    }
  : unknown);

/** The operation's part of the OpenAPI document: prose and examples; everything structural comes from its route and schemas. */
export interface OperationProse {
  /** What it does in two or three words, for the document's one-line summary of the API. */
  readonly gist: string;
  readonly summary: string;
  readonly description: string;
  readonly examples: { readonly request?: unknown; readonly response?: unknown };
  /** The message of its example `400 invalid_parameter`, when it can answer one. */
  readonly invalidParameterExample?: string;
  /** Descriptions of parameters whose schema is a named one (a `$ref` carries none of its own). */
  readonly parameters?: Readonly<Record<string, string>>;
}

/** How the benchmark measures the operation (npm run bench, docs/performance.md): on its success path. */
export interface OperationBench {
  /** What each iteration sends, the common case of its route; each path parameter names a pet the bench stored for that request alone. */
  readonly request: RequestParts;
  /** The most its log may write for one such request, in bytes: logs are billed by the byte (docs/costs.md). */
  readonly maxLogBytes: number;
}

export interface OperationDefinition<TRoute extends OperationRoute = OperationRoute> {
  readonly route: TRoute;
  readonly schemas: RouteSchemas<TRoute>;
  readonly prose: OperationProse;
  /** The environment variables its function reads besides the log level and the metrics', each by its role (shared/facts/environment.ts). */
  readonly variables: readonly OperationVariable[];
  /** Memory in MB, by stage: the cheapest that meets the stage's latency goals (docs/performance.md, "How memory is chosen"). */
  readonly memoryMiB: Readonly<Record<StageName, number>>;
  /** Its route's share of each stage's throttle. */
  readonly throttle: Readonly<Record<StageName, RouteThrottle>>;
  /** The DynamoDB actions it may call, by table: exactly what infra/ grants it, and nothing else. */
  readonly tables: { readonly [TTable in TableName]?: readonly TableAction[] };
  readonly storeFaults: StoreFaultBehaviour<TRoute>;
  /** What the pre-traffic hook asks of a new version, and the requests the deployment's traffic sends it. */
  readonly deployment: OperationChecks;
  readonly bench: OperationBench;
}

/** Any operation, read part by part: a schema per part it may read, and the store-fault statement's body when it has one. */
export type AnyOperation = Omit<OperationDefinition, 'schemas' | 'storeFaults'> & {
  readonly schemas: Partial<Record<RequestPart | 'response', v.GenericSchema>>;
  readonly storeFaults: Omit<StoreFaultBehaviour, 'body'> & { readonly body?: Readonly<Record<string, unknown>> };
};

/** States an operation: the identity, typed so each part follows from its route (a 204 has no response schema). */
export function defineOperation<const TRoute extends OperationRoute>(definition: OperationDefinition<TRoute>): OperationDefinition<TRoute> {
  return definition;
}
