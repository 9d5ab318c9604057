import type { APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';
import type { AuthorizerContext } from '../domain/auth/authorizer-context';
import type { HttpEvent } from '../http/handler';

/**
 * The events the pre-traffic checks and the deployment traffic hand a function directly, shaped as API Gateway's payload format 2.0. No check
 * goes through API Gateway, so `.invalid` (RFC 2606) names the host any link would use.
 */
const CHECK_HOST = 'pre-traffic-check.invalid';

export interface RouteRequest {
  /** API Gateway's route key, `GET /v1/pets/{petId}`, or `$default`. */
  readonly routeKey: string;
  readonly method: string;
  readonly rawPath: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly pathParameters?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  /** The authorizer's verdict; none at all for an anonymous check, as if the route had no authorizer. */
  readonly caller?: AuthorizerContext;
  /** Logged by the function on every line: ties its log to the check. */
  readonly requestId: string;
}

/** A request a route's function receives behind the authorizer (or, without `caller`, in front of none). */
export function routeEvent(request: RouteRequest, now: Date): HttpEvent {
  const query = request.query ?? {};
  return {
    version: '2.0',
    routeKey: request.routeKey,
    rawPath: request.rawPath,
    rawQueryString: new URLSearchParams(query).toString(),
    headers: { host: CHECK_HOST, 'x-forwarded-proto': 'https', ...request.headers },
    ...(Object.keys(query).length > 0 ? { queryStringParameters: { ...query } } : {}),
    ...(request.pathParameters ? { pathParameters: { ...request.pathParameters } } : {}),
    requestContext: {
      ...requestContext(request.routeKey, request.method, request.rawPath, request.requestId, now),
      ...(request.caller === undefined ? {} : { authorizer: { lambda: request.caller } }),
    },
    ...(request.body === undefined ? {} : { body: request.body }),
    isBase64Encoded: false,
  };
}

/** A request as the authorizer receives it: every header, no identity source (shared/facts/routes.ts). */
export function authorizerEvent(authorization: string | undefined, requestId: string, now: Date): APIGatewayRequestAuthorizerEventV2 {
  const rawPath = '/v1/pets';
  const routeKey = `GET ${rawPath}`;
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:${CHECK_HOST}/$default/GET${rawPath}`,
    identitySource: [],
    routeKey,
    rawPath,
    rawQueryString: '',
    cookies: [],
    headers: { host: CHECK_HOST, 'x-forwarded-proto': 'https', ...(authorization === undefined ? {} : { authorization }) },
    requestContext: requestContext(routeKey, 'GET', rawPath, requestId, now),
  };
}

function requestContext(routeKey: string, method: string, path: string, requestId: string, now: Date) {
  return {
    accountId: 'pre-traffic-check',
    apiId: 'pre-traffic-check',
    domainName: CHECK_HOST,
    domainPrefix: 'pre-traffic-check',
    http: { method, path, protocol: 'HTTP/1.1', sourceIp: '0.0.0.0', userAgent: 'pre-traffic-check' },
    requestId,
    routeKey,
    stage: '$default',
    time: now.toISOString(),
    timeEpoch: now.getTime(),
  };
}
