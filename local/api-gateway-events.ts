import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, APIGatewayRequestAuthorizerEventV2 } from 'aws-lambda';

/**
 * Builds the events an API Gateway HTTP API sends (payload format 2.0) and reads the results it
 * receives, following AWS's documentation, so handlers meet the same shapes locally as on AWS.
 */

/** A request as it came off the wire. */
export interface IncomingRequest {
  readonly method: string;
  /** Path and query exactly as sent, e.g. `/v1/pets?limit=5` (of an absolute-form target, the part after its authority). */
  readonly target: string;
  /** Raw header list, in order, names as sent (Node's `rawHeaders` pairs). */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Buffer;
  readonly sourceIp: string;
  readonly protocol: string;
  /** Scheme and port the client used, as API Gateway reports them in `x-forwarded-*`. */
  readonly scheme: 'http' | 'https';
  readonly port: number;
}

/** What API Gateway knows about a request once it picked a route. */
export interface RouteContext {
  /** `GET /v1/pets`, or `$default` when no route matched. */
  readonly routeKey: string;
  readonly pathParameters?: Record<string, string>;
  readonly requestId: string;
  readonly time: Date;
}

const ACCOUNT_ID = '000000000000';
const API_ID = 'local';
const STAGE = '$default';
const REGION = 'local';

/** An X-Ray trace header like the one API Gateway adds to a request that has none. */
export function newTraceId(): string {
  return `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomBytes(12).toString('hex')}`;
}

/** An id shaped like API Gateway's (`JKJaXmPLvHcESHA=`). */
export function newRequestId(): string {
  return randomBytes(10).toString('base64');
}

interface RequestParts {
  rawPath: string;
  rawQueryString: string;
  headers: Record<string, string>;
  cookies?: string[];
  queryStringParameters?: Record<string, string>;
}

function requestParts(request: IncomingRequest): RequestParts {
  const queryStart = request.target.indexOf('?');
  const rawPath = queryStart === -1 ? request.target : request.target.slice(0, queryStart);
  const rawQueryString = queryStart === -1 ? '' : request.target.slice(queryStart + 1);

  // Header names are lower-cased; repeated headers are joined with commas; cookies move to `cookies`.
  // No prototype: a header or parameter named `constructor` or `__proto__` is just a name, as in AWS's JSON.
  const headers: Record<string, string> = Object.create(null);
  const cookies: string[] = [];
  for (const [name, value] of request.headers) {
    const key = name.toLowerCase();
    if (key === 'cookie')
      cookies.push(
        ...value
          .split(';')
          .map((cookie) => cookie.trim())
          .filter(Boolean),
      );
    else headers[key] = key in headers ? `${headers[key]},${value}` : value;
  }
  headers['x-forwarded-for'] = request.sourceIp;
  headers['x-forwarded-port'] = String(request.port);
  headers['x-forwarded-proto'] = request.scheme;

  const queryStringParameters: Record<string, string> = Object.create(null);
  for (const pair of rawQueryString.split('&')) {
    if (pair === '') continue;
    const separator = pair.indexOf('=');
    const name = decodeQueryComponent(separator === -1 ? pair : pair.slice(0, separator));
    const value = separator === -1 ? '' : decodeQueryComponent(pair.slice(separator + 1));
    queryStringParameters[name] = name in queryStringParameters ? `${queryStringParameters[name]},${value}` : value;
  }

  return {
    rawPath,
    rawQueryString,
    headers,
    ...(cookies.length > 0 ? { cookies } : {}),
    ...(Object.keys(queryStringParameters).length > 0 ? { queryStringParameters } : {}),
  };
}

function decodeQueryComponent(component: string): string {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return component;
  }
}

function requestContext(request: IncomingRequest, parts: RequestParts, route: RouteContext) {
  const host = parts.headers.host ?? 'localhost';
  const domainName = host.replace(/:\d+$/, '');
  return {
    accountId: ACCOUNT_ID,
    apiId: API_ID,
    domainName,
    domainPrefix: domainName.split('.')[0] ?? domainName,
    http: {
      method: request.method,
      path: parts.rawPath,
      protocol: request.protocol,
      sourceIp: request.sourceIp,
      userAgent: parts.headers['user-agent'] ?? '',
    },
    requestId: route.requestId,
    routeKey: route.routeKey,
    stage: STAGE,
    time: formatRequestTime(route.time),
    timeEpoch: route.time.getTime(),
  };
}

/** The REQUEST authorizer event (payload 2.0). `identitySource` holds the values of the configured sources. */
export function buildAuthorizerEvent(
  request: IncomingRequest,
  route: RouteContext,
  identitySource: string[],
): APIGatewayRequestAuthorizerEventV2 {
  const parts = requestParts(request);
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: `arn:aws:execute-api:${REGION}:${ACCOUNT_ID}:${API_ID}/${STAGE}/${request.method}${parts.rawPath}`,
    identitySource,
    routeKey: route.routeKey,
    ...parts,
    requestContext: requestContext(request, parts, route),
    ...(route.pathParameters ? { pathParameters: route.pathParameters } : {}),
  } as APIGatewayRequestAuthorizerEventV2;
}

/** Bodies API Gateway passes as text; everything else arrives base64-encoded. */
const TEXT_MEDIA_TYPE = /^(?:text\/|application\/(?:json|xml|javascript)\b|application\/[\w.+-]+\+(?:json|xml)\b)/i;

/** The integration event (payload 2.0) for a route, with the authorizer's context. */
export function buildHttpEvent(request: IncomingRequest, route: RouteContext, authorizerContext: unknown): APIGatewayProxyEventV2 {
  const parts = requestParts(request);
  // A "text" body that is not valid UTF-8 is passed as base64, so its bytes reach the function intact.
  const isText = TEXT_MEDIA_TYPE.test(parts.headers['content-type'] ?? '') && isUtf8(request.body);
  const hasBody = request.body.length > 0;
  return {
    version: '2.0',
    routeKey: route.routeKey,
    ...parts,
    requestContext: {
      ...requestContext(request, parts, route),
      authorizer: { lambda: authorizerContext },
    },
    ...(hasBody ? { body: isText ? request.body.toString('utf8') : request.body.toString('base64') } : {}),
    ...(route.pathParameters ? { pathParameters: route.pathParameters } : {}),
    isBase64Encoded: hasBody && !isText,
  } as APIGatewayProxyEventV2;
}

/** A response as API Gateway sends it to the client. */
export interface OutgoingResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly cookies: string[];
  readonly body: Buffer;
}

/**
 * Interprets a Lambda result the way HTTP API payload 2.0 does: a structured result with
 * `statusCode` is used as given; anything else is a 200 JSON body.
 */
export function readIntegrationResult(result: unknown): OutgoingResponse {
  if (typeof result === 'object' && result !== null && 'statusCode' in result) {
    const structured = result as APIGatewayProxyStructuredResultV2;
    const headers = Object.fromEntries(
      Object.entries(structured.headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
    );
    const body = structured.body ?? '';
    return {
      statusCode: Number(structured.statusCode),
      headers,
      cookies: structured.cookies ?? [],
      body: Buffer.from(body, structured.isBase64Encoded ? 'base64' : 'utf8'),
    };
  }
  const body = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
  return { statusCode: 200, headers: { 'content-type': 'application/json' }, cookies: [], body: Buffer.from(body) };
}

/** A response API Gateway itself produces, outside any function (`{"message":"Forbidden"}`). */
export function gatewayResponse(statusCode: number, message: string): OutgoingResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json' },
    cookies: [],
    body: Buffer.from(JSON.stringify({ message })),
  };
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `12/Mar/2020:19:03:58 +0000`, API Gateway's requestContext.time format. */
function formatRequestTime(time: Date): string {
  const pad = (value: number) => value.toString().padStart(2, '0');
  return `${pad(time.getUTCDate())}/${MONTHS[time.getUTCMonth()]}/${time.getUTCFullYear()}:${pad(time.getUTCHours())}:${pad(
    time.getUTCMinutes(),
  )}:${pad(time.getUTCSeconds())} +0000`;
}
