import type * as v from 'valibot';
import { PetListSchema, PetSchema } from '../domain/pets/pet-output-schemas';
import { NewPetSchema } from '../domain/pets/pet-schemas';
import type { ApiFunctionName, FunctionName } from '../facts/function-names';
import { findRoute, type OperationId, type RequestPart, type Route, type routes } from '../facts/routes';
import { ListPetsQuerySchema, PetIdPathSchema } from '../http/pet-parameters';
import type { ConfigSchema } from '../runtime/config';
import { FUNCTION_CONFIG } from '../runtime/function-config';

/**
 * What makes each function what it is, one entry per function under its one name (shared/facts/function-names.ts).
 * Its entry point is functions/<file>.ts and its sample event local/events/<file>.json, by fileNameOf; what the
 * pre-traffic hook asks of it is checksFor(name) in functions/pre-traffic-hook/pre-traffic-expectations.ts.
 * No function bundles this file (test/project/layers.test.ts): changing a memory size, a throttle or a
 * permission here redeploys no code.
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

type RouteOf<TOperation extends OperationId> = Extract<(typeof routes)[number], { operationId: TOperation }>;

/**
 * A schema for each part of a request the route reads, none for a part it does not, and its success
 * response's, none for a 204's empty body: the very ones its handler parses with, which the OpenAPI
 * document and the tests read.
 */
export type RouteSchemas<TOperation extends OperationId = OperationId> = {
  readonly [TPart in RouteOf<TOperation>['reads'][number]]: v.GenericSchema;
} & (RouteOf<TOperation>['successStatus'] extends 204 ? unknown : { readonly response: v.GenericSchema });

/**
 * How an operation answers when the store fails it (docs/reliability.md). test/api/store-faults.test.ts and
 * test/api/store-answer-faults.test.ts send every operation its request, break the call named here at the
 * network, and hold its answer and what the tables hold afterwards to this.
 */
export type StoreFaultBehaviour<TOperation extends OperationId = OperationId> = {
  /** The store call the faults break: the one whose answer the operation's own answer waits on. */
  readonly call: { readonly table: TableName; readonly action: TableAction };
  /**
   * What the request leaves in the tables once its call reached the store, however often the SDK retried
   * it: a retry finds its own earlier write, so a create leaves exactly one pet.
   */
  readonly writes: 'nothing' | 'one pet';
  /** Its answer when the call's answer is lost and the SDK's retry is answered: the success, as if nothing was lost. */
  readonly lostAnswer: RouteOf<TOperation>['successStatus'];
  /**
   * Its answer when the store refuses connections, never answers, throttles or breaks every answer: an
   * outage a client retries, never a verdict on its request.
   */
  readonly failingStore: 'service_unavailable';
} & ('body' extends RouteOf<TOperation>['reads'][number]
  ? {
      /** The body of the request the suites send, one its schema accepts; each path parameter names a pet stored just before. */
      readonly body: Readonly<Record<string, unknown>>;
    }
  : unknown);

/** Everything every function has. */
interface FunctionBasics {
  /** The one schema of its environment, read at cold start (shared/runtime/function-config.ts): infra/ sets exactly its variables. */
  readonly config: ConfigSchema;
  /** Memory in MB, by stage: the cheapest that meets the stage's latency goals (docs/performance.md, "How memory is chosen"). */
  readonly memoryMiB: Readonly<Record<StageName, number>>;
  /** The DynamoDB actions it may call, by table: exactly what infra/ grants it, and nothing else. */
  readonly tables: { readonly [TTable in TableName]?: readonly TableAction[] };
}

/**
 * One function's entry: the basics; for an operation, its route and schemas; for every function a route
 * invokes, that route's share of each stage's throttle (routeNotFound's covers the preflight route too).
 */
export type FunctionEntry<TName extends FunctionName = FunctionName> = FunctionBasics &
  (TName extends OperationId
    ? { readonly route: Route; readonly schemas: RouteSchemas<TName>; readonly storeFaults: StoreFaultBehaviour<TName> }
    : unknown) &
  (TName extends ApiFunctionName
    ? TName extends 'authorizer'
      ? unknown
      : { readonly throttle: Readonly<Record<StageName, RouteThrottle>> }
    : unknown) &
  (TName extends 'routeNotFound' ? { readonly preflightThrottle: Readonly<Record<StageName, RouteThrottle>> } : unknown);

export const FUNCTION_CATALOG = {
  listPets: {
    route: findRoute('listPets'),
    schemas: { query: ListPetsQuerySchema, response: PetListSchema },
    config: FUNCTION_CONFIG.listPets,
    memoryMiB: { staging: 256, production: 512 },
    // Listings are most of the traffic.
    throttle: { staging: { rateLimit: 9, burstLimit: 18 }, production: { rateLimit: 90, burstLimit: 180 } },
    tables: { pets: ['Query'] },
    // A page queries every listing shard; a lost answer's retry is one more query.
    storeFaults: { call: { table: 'pets', action: 'Query' }, writes: 'nothing', lostAnswer: 200, failingStore: 'service_unavailable' },
  },
  createPet: {
    route: findRoute('createPet'),
    schemas: { body: NewPetSchema, response: PetSchema },
    config: FUNCTION_CONFIG.createPet,
    memoryMiB: { staging: 256, production: 512 },
    throttle: { staging: { rateLimit: 5, burstLimit: 10 }, production: { rateLimit: 50, burstLimit: 100 } },
    tables: {
      // GetItem: a conditional put that fails is read back to tell our own earlier write from a collision.
      pets: ['PutItem', 'GetItem'],
      // An Idempotency-Key's record: claimed (put), read, completed (update), released (delete).
      idempotency: ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem'],
    },
    // Sent without an Idempotency-Key: the conditional put alone keeps a retried write to one pet.
    storeFaults: {
      body: { name: 'Rex', categoryId: 1 },
      call: { table: 'pets', action: 'PutItem' },
      writes: 'one pet',
      lostAnswer: 201,
      failingStore: 'service_unavailable',
    },
  },
  getPet: {
    route: findRoute('getPet'),
    schemas: { path: PetIdPathSchema, response: PetSchema },
    config: FUNCTION_CONFIG.getPet,
    memoryMiB: { staging: 256, production: 512 },
    throttle: { staging: { rateLimit: 4, burstLimit: 8 }, production: { rateLimit: 40, burstLimit: 80 } },
    tables: { pets: ['GetItem'] },
    storeFaults: { call: { table: 'pets', action: 'GetItem' }, writes: 'nothing', lostAnswer: 200, failingStore: 'service_unavailable' },
  },
  routeNotFound: {
    config: FUNCTION_CONFIG.routeNotFound,
    memoryMiB: { staging: 128, production: 256 },
    // Unknown paths get the smallest share, so a flood of them is answered 429 early.
    throttle: { staging: { rateLimit: 2, burstLimit: 4 }, production: { rateLimit: 20, burstLimit: 40 } },
    // The CORS preflight route's share, on a stage that allows browser origins (shared/facts/routes.ts, preflightRoute).
    preflightThrottle: { staging: { rateLimit: 1, burstLimit: 2 }, production: { rateLimit: 10, burstLimit: 20 } },
    tables: {},
  },
  authorizer: {
    config: FUNCTION_CONFIG.authorizer,
    memoryMiB: { staging: 256, production: 512 },
    // Its only access: looking one key up by its hash.
    tables: { apiKeys: ['GetItem'] },
  },
  preTrafficHook: {
    config: FUNCTION_CONFIG.preTrafficHook,
    // It spends its time waiting for the functions it invokes, not computing: the stages' smaller size.
    memoryMiB: { staging: 256, production: 256 },
    // Issuing its check keys and revoking them by their hash: no read, no query, no delete, so the keys stay on record.
    tables: { apiKeys: ['PutItem', 'UpdateItem'] },
  },
  deploymentTraffic: {
    config: FUNCTION_CONFIG.deploymentTraffic,
    // It waits on the functions it invokes: the smallest memory serves.
    memoryMiB: { staging: 128, production: 128 },
    tables: {},
  },
  syntheticProbe: {
    config: FUNCTION_CONFIG.syntheticProbe,
    // It waits on the network, and its own CPU time counts in ProbeLatency.
    memoryMiB: { staging: 256, production: 256 },
    // It reaches the tables only through the API, as clients do.
    tables: {},
  },
} as const satisfies { readonly [TName in FunctionName]: FunctionEntry<TName> };

/** An operation's schemas, by part: undefined for a part it does not read, and for the response of a 204. */
export function schemasOf(operationId: OperationId): Partial<Record<RequestPart | 'response', v.GenericSchema>> {
  return FUNCTION_CATALOG[operationId].schemas;
}

/** Each function's memory in a stage, in MB. */
export function memoryOf(stage: StageName): Readonly<Record<FunctionName, number>> {
  return Object.fromEntries(Object.entries(FUNCTION_CATALOG).map(([name, entry]) => [name, entry.memoryMiB[stage]])) as Record<
    FunctionName,
    number
  >;
}
