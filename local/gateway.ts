import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import { authorizer, fallbackHandler, matchRoute, routeKey } from '../shared/routes';
import {
  buildAuthorizerEvent,
  buildHttpEvent,
  gatewayResponse,
  newRequestId,
  newTraceId,
  readIntegrationResult,
  type IncomingRequest,
  type OutgoingResponse,
  type RouteContext,
} from './api-gateway-events';
import type { FunctionRuntime } from './functions';

/** API Gateway's own payload limit for HTTP APIs. Our functions enforce a much smaller one. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** API Gateway's maximum integration timeout for HTTP APIs. */
const INTEGRATION_TIMEOUT_MS = 30_000;

export interface GatewayOptions {
  readonly functions: Pick<FunctionRuntime, 'invoke'>;
  /** Receives one JSON access-log line per request, shaped like the deployed stage's access log. */
  readonly accessLog?: (line: string) => void;
}

/**
 * The local stand-in for the HTTP API: routes from the shared route table, the Lambda authorizer on
 * every route, payload 2.0 events, and API Gateway's own answers where API Gateway, not our code,
 * would answer.
 */
export function createGateway({ functions, accessLog }: GatewayOptions): RequestListener {
  return (req, res) => {
    const started = Date.now();
    const requestId = newRequestId();
    void readRequest(req)
      .then((request) => (request ? route(request, requestId) : gatewayResponse(413, 'Request Entity Too Large')))
      .catch(() => gatewayResponse(500, 'Internal Server Error'))
      .then((response) => {
        send(res, response, requestId);
        accessLog?.(
          JSON.stringify({
            requestId,
            ip: req.socket.remoteAddress,
            requestTime: new Date(started).toISOString(),
            httpMethod: req.method,
            path: req.url?.split('?')[0],
            protocol: `HTTP/${req.httpVersion}`,
            status: response.statusCode,
            responseLength: response.body.length,
            responseLatency: Date.now() - started,
          }),
        );
      });
  };

  async function route(request: IncomingRequest, requestId: string): Promise<OutgoingResponse> {
    const rawPath = request.target.split('?')[0] ?? '/';
    const match = matchRoute(request.method, rawPath);
    const context: RouteContext = {
      routeKey: match ? routeKey(match.route) : '$default',
      requestId,
      time: new Date(),
      ...(match && Object.keys(match.pathParameters).length > 0 ? { pathParameters: match.pathParameters } : {}),
    };

    const identity = identitySourceValues(request);
    if (identity === undefined) return gatewayResponse(401, 'Unauthorized');
    let verdict: APIGatewaySimpleAuthorizerWithContextResult<unknown>;
    try {
      verdict = (await invokeWithTimeout(
        authorizer.handler,
        buildAuthorizerEvent(request, context, identity),
      )) as APIGatewaySimpleAuthorizerWithContextResult<unknown>;
    } catch {
      return gatewayResponse(500, 'Internal Server Error');
    }
    if (verdict?.isAuthorized !== true) return gatewayResponse(403, 'Forbidden');

    const handler = match?.route.handler ?? fallbackHandler;
    try {
      return readIntegrationResult(await invokeWithTimeout(handler, buildHttpEvent(request, context, verdict.context)));
    } catch (error) {
      if (error instanceof IntegrationTimeoutError) return gatewayResponse(503, 'Service Unavailable');
      return gatewayResponse(500, 'Internal Server Error');
    }
  }

  async function invokeWithTimeout(name: string, event: unknown): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        functions.invoke(name, event),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new IntegrationTimeoutError()), INTEGRATION_TIMEOUT_MS);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

class IntegrationTimeoutError extends Error {}

/** Values of the authorizer's identity sources; undefined when one is missing (API Gateway's 401). */
function identitySourceValues(request: IncomingRequest): string[] | undefined {
  const values: string[] = [];
  for (const source of authorizer.identitySource) {
    const header = /^\$request\.header\.(.+)$/i.exec(source)?.[1]?.toLowerCase();
    const value = request.headers.find(([name]) => name.toLowerCase() === header)?.[1];
    if (!value) return undefined;
    values.push(value);
  }
  return values;
}

async function readRequest(req: IncomingMessage): Promise<IncomingRequest | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > GATEWAY_MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  const headers: Array<[string, string]> = [];
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    headers.push([req.rawHeaders[index]!, req.rawHeaders[index + 1]!]);
  }
  // Once per request, so the authorizer and the route see the same trace, as on AWS.
  if (req.headers['x-amzn-trace-id'] === undefined) headers.push(['X-Amzn-Trace-Id', newTraceId()]);
  return {
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    headers,
    body: Buffer.concat(chunks),
    sourceIp: (req.socket.remoteAddress ?? '127.0.0.1').replace(/^::ffff:/, ''),
    protocol: `HTTP/${req.httpVersion}`,
    scheme: 'http',
    port: req.socket.localPort ?? 80,
  };
}

function send(res: ServerResponse, response: OutgoingResponse, requestId: string): void {
  res.statusCode = response.statusCode;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.cookies.length > 0) res.setHeader('set-cookie', response.cookies);
  res.setHeader('apigw-requestid', requestId);
  res.setHeader('content-length', response.body.length);
  res.end(response.body);
}
