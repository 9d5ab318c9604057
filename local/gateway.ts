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
    // Read now: once a client is gone its socket is detached, and nothing that runs later may
    // depend on it (reading `req.socket.remoteAddress` then threw and ended `npm start`).
    const client = { ip: req.socket.remoteAddress, port: req.socket.localPort };
    // A client that resets mid-request ends its own request only.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    readRequest(req, client)
      .then((request) => (request === TOO_LARGE ? refuseTooLarge(req, res) : route(request, requestId)))
      .catch((error: unknown) => (error instanceof ClientGoneError ? undefined : gatewayResponse(500, 'Internal Server Error')))
      .then((response) => {
        // Nobody to answer (the upload was aborted, the client hung up): nothing to send or log.
        if (response === undefined || res.destroyed) return;
        send(res, response, requestId);
        accessLog?.(
          JSON.stringify({
            requestId,
            ip: client.ip,
            requestTime: new Date(started).toISOString(),
            httpMethod: req.method,
            path: req.url?.split('?')[0],
            protocol: `HTTP/${req.httpVersion}`,
            status: response.statusCode,
            responseLength: response.body.length,
            responseLatency: Date.now() - started,
          }),
        );
      })
      // The last link: a failure to answer or to log must not become an unhandled rejection.
      .catch(() => res.destroy());
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

const TOO_LARGE = Symbol('too large');

/** The client went away before its request was complete. */
class ClientGoneError extends Error {}

async function readRequest(
  req: IncomingMessage,
  client: { ip: string | undefined; port: number | undefined },
): Promise<IncomingRequest | typeof TOO_LARGE> {
  const body = await readBody(req);
  if (body === TOO_LARGE) return TOO_LARGE;
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
    body,
    sourceIp: (client.ip ?? '127.0.0.1').replace(/^::ffff:/, ''),
    protocol: `HTTP/${req.httpVersion}`,
    scheme: 'http',
    port: client.port ?? 80,
  };
}

/**
 * The body, up to API Gateway's limit. A declared `Content-Length` over it is refused before a byte
 * is read; a chunked body as soon as it passes it. Listeners rather than `for await`, which destroys
 * the stream (and with it the socket the 413 must go out on) when the loop stops early.
 */
function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE> {
  if (Number(req.headers['content-length'] ?? 0) > GATEWAY_MAX_BODY_BYTES) return Promise.resolve(TOO_LARGE);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (outcome: () => void) => {
      req.off('data', onData).off('end', onEnd).off('close', onClose);
      outcome();
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= GATEWAY_MAX_BODY_BYTES) chunks.push(chunk);
      else settle(() => (req.pause(), resolve(TOO_LARGE)));
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks)));
    const onClose = () => settle(() => reject(new ClientGoneError()));
    req.on('data', onData).on('end', onEnd).on('close', onClose);
  });
}

/** How long a refused upload may go on being discarded, so that its sender hears the 413. */
const LINGER_MS = 2_000;

/**
 * API Gateway's 413, then a lingering close, as web servers do: our side of the connection ends
 * once the answer is out, what the client is still sending is discarded, not kept, and the socket
 * goes after LINGER_MS at the latest. Closing at once would reset a connection with unread data in
 * it, and a reset makes the client drop the very 413 it was sent.
 */
function refuseTooLarge(req: IncomingMessage, res: ServerResponse): OutgoingResponse {
  const { socket } = req;
  res.once('finish', () => {
    socket.end();
    socket.resume();
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
  return gatewayResponse(413, 'Request Entity Too Large');
}

function send(res: ServerResponse, response: OutgoingResponse, requestId: string): void {
  res.statusCode = response.statusCode;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.cookies.length > 0) res.setHeader('set-cookie', response.cookies);
  res.setHeader('apigw-requestid', requestId);
  res.setHeader('content-length', response.body.length);
  res.end(response.body);
}
