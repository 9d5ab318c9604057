import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2, Context } from 'aws-lambda';
import { createLambdaContext } from '../../local/lambda-context.mjs';
import type { AuthorizerContext } from '../../shared/domain/auth/authorizer-context';
import type { HttpEvent } from '../../shared/http/handler';

export interface HttpEventOptions {
  method?: string;
  /** Route key as API Gateway names it, e.g. `GET /v1/pets/{petId}`. */
  routeKey?: string;
  rawPath?: string;
  query?: Record<string, string>;
  headers?: Record<string, string>;
  pathParameters?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  /** The authorizer's verdict; an allowed key by default. */
  authorizer?: AuthorizerContext | undefined;
}

/** An API Gateway HTTP API payload 2.0 event, as AWS documents it, behind our authorizer. */
export function httpEvent(options: HttpEventOptions = {}): HttpEvent {
  const method = options.method ?? 'GET';
  const rawPath = options.rawPath ?? '/v1/pets';
  const query = options.query ?? {};
  return {
    version: '2.0',
    routeKey: options.routeKey ?? `${method} ${rawPath}`,
    rawPath,
    rawQueryString: new URLSearchParams(query).toString(),
    headers: { host: 'abc123.execute-api.eu-west-1.amazonaws.com', 'x-forwarded-proto': 'https', ...options.headers },
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    ...(options.pathParameters ? { pathParameters: options.pathParameters } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: 'abc123.execute-api.eu-west-1.amazonaws.com',
      domainPrefix: 'abc123',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.1', userAgent: 'vitest' },
      requestId: 'test-request-id',
      routeKey: options.routeKey ?? `${method} ${rawPath}`,
      stage: '$default',
      time: '22/Nov/2026:12:00:00 +0000',
      timeEpoch: 1_795_348_800_000,
      authorizer: { lambda: 'authorizer' in options ? options.authorizer : { outcome: 'allowed', keyId: 'key_test' } },
    },
    ...(options.body === undefined ? {} : { body: options.body }),
    isBase64Encoded: options.isBase64Encoded ?? false,
  } as HttpEvent & APIGatewayProxyEventV2;
}

/** A payload 2.0 REQUEST authorizer event carrying an Authorization header (or none). */
export function authorizerEvent(authorization?: string): APIGatewayRequestAuthorizerEventV2 {
  const event = httpEvent({ headers: authorization === undefined ? {} : { authorization } });
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/$default/GET/v1/pets',
    identitySource: [],
    routeKey: event.routeKey,
    rawPath: event.rawPath,
    rawQueryString: event.rawQueryString,
    headers: event.headers,
    requestContext: event.requestContext,
  } as unknown as APIGatewayRequestAuthorizerEventV2;
}

/** A Lambda context with the fields our handlers read; its clock runs from now to the timeout. */
export function lambdaContext(options: { timeoutMs?: number } = {}): Context {
  return createLambdaContext({
    functionName: 'test-function',
    memoryLimitInMB: 256,
    timeoutMs: options.timeoutMs ?? 10_000,
    awsRequestId: 'test-invocation-id',
    logStreamName: 'test',
    region: 'eu-west-1',
  });
}
