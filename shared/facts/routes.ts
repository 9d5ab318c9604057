import type { ErrorCode } from './error-codes';
import { OPERATION_IDS, OPERATION_ROUTES } from './operation-routes';

/**
 * The route table that the CDK stack, the local gateway and the OpenAPI document are built from. Every
 * function bundles it, so it holds only what a request is routed and answered by: each operation states
 * its route with everything else that makes it what it is in shared/operations/, which no function
 * bundles, and `npm run generate` writes the routes out (operation-routes.ts).
 */

export { OPERATION_IDS };
export type OperationId = (typeof OPERATION_IDS)[number];

/** Every path is served under this version segment; it is part of the base URL clients use. */
export const BASE_PATH = '/v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Deprecation {
  /** When the operation was deprecated (RFC 9745 `Deprecation` header). */
  readonly since: Date;
  /** When it stops working (RFC 8594 `Sunset` header). */
  readonly sunset: Date;
  /** Path, under BASE_PATH, of the operation that replaces it. */
  readonly successorPath: string;
}

/** A part of a request besides its headers; an operation's schema for each part it reads is in its file of shared/operations/. */
export type RequestPart = 'query' | 'path' | 'body';

/**
 * The status a route answers on success: any 2xx but 205, which resets a browser's form. A 204 answers no
 * body at all, so its route has no response schema (shared/operations/operation.ts).
 */
export type SuccessStatus = 200 | 201 | 202 | 203 | 204 | 206 | 207 | 208 | 226;

/** Error codes any route can answer: no valid key, a bug, an outage. */
export const ROUTE_ERRORS = ['unauthorized', 'internal_error', 'service_unavailable'] as const satisfies readonly ErrorCode[];

export interface Route {
  /** Public operation name, also the OpenAPI operationId and the name of the function that serves it. */
  readonly operationId: OperationId;
  readonly method: HttpMethod;
  /** Path template under BASE_PATH, with `{name}` parameters as API Gateway writes them. */
  readonly path: string;
  /** The parts of a request it reads; a query parameter sent to an operation that reads none is refused. */
  readonly reads: readonly RequestPart[];
  /** The status of its success response. */
  readonly successStatus: SuccessStatus;
  /** Error codes this operation can answer besides ROUTE_ERRORS; their statuses follow from the code. */
  readonly errors: readonly ErrorCode[];
  /**
   * Honours an `Idempotency-Key` header (shared/domain/idempotency/): documented as such, and its function
   * gets the idempotency table (infra/).
   */
  readonly idempotent?: boolean;
  /** Answers in pages linked by signed cursors: its function gets the cursor secret (infra/). */
  readonly paginated?: boolean;
  readonly deprecation?: Deprecation;
}

export const routes = OPERATION_ROUTES satisfies readonly Route[];

/**
 * How API Gateway calls the Lambda authorizer in front of every route. No identity source on purpose: with
 * one, API Gateway answers a missing key with its own 401 body, not our Error (docs/authentication.md).
 */
export const AUTHORIZER_SETTINGS = {
  identitySource: [] as readonly string[],
  /** API Gateway's result cache; must stay 0 without an identity source. */
  resultsCacheTtlSeconds: 0,
} as const;

/**
 * The one route without the authorizer, deployed only when a stage allows browser origins: browsers send
 * CORS preflights without credentials, which the authorizer would refuse. routeNotFound serves it, as it
 * serves API Gateway's `$default` route (every request no route matches): what reaches it is answered 204.
 */
export const preflightRoute = { path: '/{proxy+}', routeKey: 'OPTIONS /{proxy+}' } as const;

/** The API Gateway route key (`GET /v1/pets`) of a route. */
export function routeKey(route: Pick<Route, 'method' | 'path'>): string {
  return `${route.method} ${BASE_PATH}${route.path}`;
}

export interface RouteMatch {
  readonly route: Route;
  readonly pathParameters: Record<string, string>;
}

/**
 * Each route with the pattern its path template matches, made at the first match: only the local
 * gateway matches paths (API Gateway does it on AWS), and the functions load this file too.
 */
let templates: Array<{ route: Route; pattern: RegExp }> | undefined;
function routeTemplates(): Array<{ route: Route; pattern: RegExp }> {
  templates ??= routes.map((route) => ({ route, pattern: templatePattern(BASE_PATH + route.path) }));
  return templates;
}

function templatePattern(template: string): RegExp {
  const source = template
    .split('/')
    .map((segment) => {
      const parameter = /^\{(\w+)\}$/.exec(segment);
      return parameter ? `(?<${parameter[1]}>[^/]+)` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

/** The names of a path template's parameters, in order: none for a path that names no pet. */
export function pathParameterNames(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name!);
}

/**
 * A route's raw path under BASE_PATH with every path parameter naming `value` (encoded), and those parameters
 * as API Gateway hands them over (none when it has none).
 */
export function pathNaming(route: Pick<Route, 'path'>, value: string): { rawPath: string; pathParameters?: Record<string, string> } {
  const names = pathParameterNames(route.path);
  return {
    rawPath: BASE_PATH + route.path.replace(/\{\w+\}/g, encodeURIComponent(value)),
    ...(names.length > 0 ? { pathParameters: Object.fromEntries(names.map((name) => [name, value])) } : {}),
  };
}

/** Where a request to a route goes, as API Gateway names it to the function, with every path parameter naming `value`. */
export function routeTarget(
  route: Pick<Route, 'method' | 'path'>,
  value: string,
): { routeKey: string; method: Route['method']; rawPath: string; pathParameters?: Record<string, string> } {
  return { routeKey: routeKey(route), method: route.method, ...pathNaming(route, value) };
}

/** Finds the route for a method and raw path, as API Gateway does, with decoded path parameters. */
export function matchRoute(method: string, rawPath: string): RouteMatch | undefined {
  for (const { route, pattern } of routeTemplates()) {
    if (route.method !== method) continue;
    const match = pattern.exec(rawPath);
    if (!match) continue;
    const pathParameters: Record<string, string> = {};
    for (const [name, value] of Object.entries(match.groups ?? {})) pathParameters[name] = safeDecode(value);
    return { route, pathParameters };
  }
  return undefined;
}

/** The methods served at a raw path, for a 405's `Allow` header; empty when the path is unknown. */
export function allowedMethods(rawPath: string): HttpMethod[] {
  return routeTemplates()
    .filter(({ pattern }) => pattern.test(rawPath))
    .map(({ route }) => route.method);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Whether a function's name is an operation's, which its route and its file of shared/operations/ go by. */
export function isOperationId(name: string): name is OperationId {
  return (OPERATION_IDS as readonly string[]).includes(name);
}

export function findRoute(operationId: OperationId): Route {
  const route = routes.find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`Unknown operation ${operationId}`);
  return route;
}
