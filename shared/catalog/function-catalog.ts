import type * as v from 'valibot';
import type { ApiFunctionName, FunctionName } from '../facts/function-names';
import { OPERATION_IDS, routes, type OperationId, type RequestPart, type Route } from '../facts/routes';
import type { ConfigSchema } from '../runtime/config';
import { FUNCTION_CONFIG } from '../runtime/function-config';
import type {
  AnyOperation,
  RouteSchemas,
  RouteThrottle,
  StageName,
  StoreFaultBehaviour,
  TableAction,
  TableName,
} from '../operations/operation';
import { OPERATIONS } from '../operations/operations';

export type { RouteSchemas, RouteThrottle, StageName, StoreFaultBehaviour, TableAction, TableName };

/**
 * What makes each function what it is, one entry per function under its one name (shared/facts/function-names.ts).
 * An operation's entry is what its file of shared/operations/ states; the others' are here. Its entry point is
 * functions/<file>.ts and its sample event local/events/<file>.json, by fileNameOf; what the pre-traffic hook
 * asks of it is checksFor(name) in functions/pre-traffic-hook/pre-traffic-expectations.ts.
 * No function bundles this file (test/project/layers.test.ts): changing a memory size, a throttle or a
 * permission here redeploys no code.
 */

type DefinitionOf<TOperation extends OperationId> = (typeof OPERATIONS)[TOperation];

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
    ? {
        readonly route: Route;
        readonly schemas: DefinitionOf<TName>['schemas'];
        readonly storeFaults: DefinitionOf<TName>['storeFaults'];
        readonly definition: DefinitionOf<TName>;
      }
    : unknown) &
  (TName extends ApiFunctionName
    ? TName extends 'authorizer'
      ? unknown
      : { readonly throttle: Readonly<Record<StageName, RouteThrottle>> }
    : unknown) &
  (TName extends 'routeNotFound' ? { readonly preflightThrottle: Readonly<Record<StageName, RouteThrottle>> } : unknown);

/** An operation's entry, from its file of shared/operations/: its route as the route table holds it. */
function operationEntry<TOperation extends OperationId>(operationId: TOperation) {
  const definition: AnyOperation = OPERATIONS[operationId];
  const route = routes.find((candidate) => candidate.operationId === operationId);
  if (route === undefined || JSON.stringify(route) !== JSON.stringify(definition.route)) {
    // The route table is written from the operations' files: one that differs is stale.
    throw new Error(`The route table does not hold ${operationId}'s route as shared/operations/ states it: run npm run generate.`);
  }
  const { schemas, storeFaults, memoryMiB, throttle, tables } = definition;
  return { route, schemas, storeFaults, memoryMiB, throttle, tables, config: FUNCTION_CONFIG[operationId], definition };
}

// Sound: one entry per operation, each from that operation's own file.
const OPERATION_ENTRIES = Object.fromEntries(OPERATION_IDS.map((operationId) => [operationId, operationEntry(operationId)])) as unknown as {
  readonly [TOperation in OperationId]: FunctionBasics & {
    readonly route: Route;
    readonly schemas: DefinitionOf<TOperation>['schemas'];
    readonly storeFaults: DefinitionOf<TOperation>['storeFaults'];
    readonly throttle: Readonly<Record<StageName, RouteThrottle>>;
    readonly definition: DefinitionOf<TOperation>;
  };
};

export const FUNCTION_CATALOG = {
  ...OPERATION_ENTRIES,
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
