import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import * as startCorsPolicy from '../shared/http/cors-policy';
import type { CorsConfig } from '../shared/http/cors-policy';
import * as startRouteTable from '../shared/facts/routes';
import type { ApiFunctionName } from '../shared/facts/function-names';
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
import { CorsEmulation, type CorsPolicy } from './cors';
import type { FunctionRuntime } from './functions';
import type { RequestTarget } from './request-target';
import { API_GATEWAY_AUTHORIZER_TIMEOUT_MS, API_GATEWAY_INTEGRATION_TIMEOUT_MS } from '../shared/facts/time-budget';

/** API Gateway's own payload limit for HTTP APIs. Our functions enforce a much smaller one. */
const GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

export interface GatewayOptions {
  readonly functions: Pick<FunctionRuntime, 'invoke'>;
  /** Receives one JSON access-log line per request, shaped like the deployed stage's access log. */
  readonly accessLog?: (line: string) => void;
  /** The stage's CORS policy, emulated as API Gateway applies it; no browser origin by default. */
  readonly cors?: CorsConfig;
  /** The route table and the CORS policy as the sources are now, so under `npm run dev` they follow an edit; those loaded at start by default. */
  readonly sources?: () => Promise<GatewaySources>;
  /** How long API Gateway waits for the authorizer and for a route's function; AWS's limits unless a test says otherwise. */
  readonly waitsMs?: { readonly authorizer: number; readonly integration: number };
}

/** What the gateway reads from shared/: the route table (routes, the authorizer's settings, the preflight route) and the CORS policy. */
export interface GatewaySources {
  readonly routeTable: typeof startRouteTable;
  readonly corsPolicy: CorsPolicy;
}

const START_SOURCES: GatewaySources = { routeTable: startRouteTable, corsPolicy: startCorsPolicy };

/** Handles one request aimed at `target` (its origin-form path and query, and its host). */
export type Gateway = (req: IncomingMessage, res: ServerResponse, target: RequestTarget) => void;

/** The local stand-in for the HTTP API, giving API Gateway's own answers where API Gateway, not our code, would answer. */
export function createGateway({
  functions,
  accessLog,
  cors: corsConfig,
  sources = async () => START_SOURCES,
  waitsMs = API_GATEWAY_WAITS_MS,
}: GatewayOptions): Gateway {
  const stage = corsConfig ?? { allowOrigins: [], maxAgeSeconds: 0 };
  return (req, res, target) => {
    const arrival = arrive(req, target);
    // A client that resets mid-request ends its own request only. Errors on the socket itself reach
    // the server's 'clientError' handler (local-api.ts), which destroys that connection.
    req.on('error', ignore);
    res.on('error', ignore);
    respond(req, arrival)
      .then((outcome) => {
        // Abandoned requests are not logged with a made-up status such as 499: nothing was answered.
        if (outcome === undefined || res.destroyed || arrival.socket.destroyed) return;
        const response = outcome === TOO_LARGE ? refuseTooLarge(res, arrival) : answer(res, outcome, arrival.requestId);
        accessLog?.(accessLogLine(arrival, response));
      })
      // The last link: a failure to answer or to log ends this exchange, never the process.
      .catch(() => res.destroy());
  };

  /** The answer; TOO_LARGE for a body over the limit; undefined when the client left before sending it all. */
  async function respond(req: IncomingMessage, arrival: Arrival): Promise<OutgoingResponse | typeof TOO_LARGE | undefined> {
    try {
      const request = await readRequest(req, arrival);
      if (request === TOO_LARGE) return TOO_LARGE;
      const { routeTable, corsPolicy } = await sources();
      const cors = new CorsEmulation(stage, corsPolicy);
      if (cors.isPreflight(request)) return cors.answerPreflight(request);
      return cors.decorate(request, await route(request, arrival.requestId, routeTable, cors));
    } catch (error) {
      return error instanceof ClientGoneError ? undefined : gatewayResponse(500, 'Internal Server Error');
    }
  }

  async function route(
    request: IncomingRequest,
    requestId: string,
    { AUTHORIZER_SETTINGS, matchRoute, preflightRoute, routeKey }: GatewaySources['routeTable'],
    cors: CorsEmulation,
  ): Promise<OutgoingResponse> {
    const rawPath = request.target.split('?')[0] ?? '/';
    const match = matchRoute(request.method, rawPath);
    const context: RouteContext = {
      routeKey: match ? routeKey(match.route) : '$default',
      requestId,
      time: new Date(),
      ...(match && Object.keys(match.pathParameters).length > 0 ? { pathParameters: match.pathParameters } : {}),
    };

    // With CORS on, the stage has an OPTIONS route without the authorizer (shared/facts/routes.ts), and
    // OPTIONS requests that are not preflights land there.
    if (cors.enabled && request.method === 'OPTIONS' && !match && rawPath !== '/') {
      return invokeIntegration('routeNotFound', buildHttpEvent(request, { ...context, routeKey: preflightRoute.routeKey }, undefined));
    }

    const identity = identitySourceValues(request, AUTHORIZER_SETTINGS.identitySource);
    if (identity === undefined) return gatewayResponse(401, 'Unauthorized');
    let verdict: APIGatewaySimpleAuthorizerWithContextResult<unknown>;
    try {
      verdict = (await invokeWithTimeout(
        'authorizer',
        buildAuthorizerEvent(request, context, identity),
        waitsMs.authorizer,
      )) as APIGatewaySimpleAuthorizerWithContextResult<unknown>;
    } catch {
      return gatewayResponse(500, 'Internal Server Error');
    }
    if (verdict?.isAuthorized !== true) return gatewayResponse(403, 'Forbidden');

    return invokeIntegration(match?.route.operationId ?? 'routeNotFound', buildHttpEvent(request, context, verdict.context));
  }

  async function invokeIntegration(name: ApiFunctionName, event: unknown): Promise<OutgoingResponse> {
    try {
      return readIntegrationResult(await invokeWithTimeout(name, event, waitsMs.integration));
    } catch (error) {
      if (error instanceof IntegrationTimeoutError) return gatewayResponse(503, 'Service Unavailable');
      return gatewayResponse(500, 'Internal Server Error');
    }
  }

  /** API Gateway waits this long for a function, the authorizer less than the route's integration. */
  async function invokeWithTimeout(name: string, event: unknown, timeoutMs: number): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        functions.invoke(name, event),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new IntegrationTimeoutError()), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

class IntegrationTimeoutError extends Error {}

const API_GATEWAY_WAITS_MS = { authorizer: API_GATEWAY_AUTHORIZER_TIMEOUT_MS, integration: API_GATEWAY_INTEGRATION_TIMEOUT_MS };

/** Values of the authorizer's identity sources; undefined when one is missing (API Gateway's 401). */
function identitySourceValues(request: IncomingRequest, identitySource: readonly string[]): string[] | undefined {
  const values: string[] = [];
  for (const source of identitySource) {
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

function ignore(): void {}

/**
 * What the event and the access log need from the connection, read as the request arrives: once a
 * client is gone its socket no longer knows its addresses.
 */
interface Arrival {
  readonly requestId: string;
  readonly started: number;
  readonly socket: Socket;
  readonly ip: string | undefined;
  readonly port: number | undefined;
  readonly method: string;
  /** The origin-form target: path and query. */
  readonly target: string;
  /** The host the request names, from its Host header or its absolute-form target. */
  readonly host: string;
  readonly protocol: string;
}

function arrive(req: IncomingMessage, target: RequestTarget): Arrival {
  return {
    requestId: newRequestId(),
    started: Date.now(),
    socket: req.socket,
    ip: req.socket.remoteAddress,
    port: req.socket.localPort,
    method: req.method ?? 'GET',
    target: target.pathAndQuery,
    host: target.host,
    protocol: `HTTP/${req.httpVersion}`,
  };
}

async function readRequest(req: IncomingMessage, arrival: Arrival): Promise<IncomingRequest | typeof TOO_LARGE> {
  const body = await readBody(req);
  if (body === TOO_LARGE) return TOO_LARGE;
  const headers: Array<[string, string]> = [];
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    const name = req.rawHeaders[index]!;
    // An absolute-form target's authority replaces the Host header's value (RFC 9112 §3.2.2).
    headers.push([name, name.toLowerCase() === 'host' ? arrival.host : req.rawHeaders[index + 1]!]);
  }
  // Once per request, so the authorizer and the route see the same trace, as on AWS.
  if (req.headers['x-amzn-trace-id'] === undefined) headers.push(['X-Amzn-Trace-Id', newTraceId()]);
  return {
    method: arrival.method,
    target: arrival.target,
    headers,
    body,
    sourceIp: (arrival.ip ?? '127.0.0.1').replace(/^::ffff:/, ''),
    protocol: arrival.protocol,
    scheme: 'http',
    port: arrival.port ?? 80,
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
      else
        settle(() => {
          req.pause();
          resolve(TOO_LARGE);
        });
    };
    const onEnd = () => settle(() => resolve(Buffer.concat(chunks)));
    const onClose = () => settle(() => reject(new ClientGoneError()));
    req.on('data', onData).on('end', onEnd).on('close', onClose);
  });
}

/** How long a refused upload's connection stays open after the 413, so that its sender hears it. */
const LINGER_MS = 2_000;

/**
 * API Gateway's 413 with `Connection: close`, then a lingering close; the rest of the upload is never read.
 * The response is never `end()`ed: Node would then destroy the socket over unread upload data, resetting
 * the connection, and a client still uploading would drop the 413.
 */
function refuseTooLarge(res: ServerResponse, arrival: Arrival): OutgoingResponse {
  const response = gatewayResponse(413, 'Request Entity Too Large');
  res.setHeader('connection', 'close');
  writeHead(res, response, arrival.requestId);
  if (arrival.method === 'HEAD') {
    // HEAD is answered with the head alone. Node drops a body written to it, and with it the head
    // that would have gone out in front: the head is flushed by itself, and the socket's end follows.
    res.flushHeaders();
    lingerThenClose(arrival.socket);
  } else {
    res.write(response.body, (error) => error || lingerThenClose(arrival.socket));
  }
  return response;
}

/** Our side ends once the answer is out; the socket goes after LINGER_MS, or earlier if the client resets it. */
function lingerThenClose(socket: Socket): void {
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(timer));
}

function answer(res: ServerResponse, response: OutgoingResponse, requestId: string): OutgoingResponse {
  writeHead(res, response, requestId);
  res.end(response.body);
  return response;
}

function writeHead(res: ServerResponse, response: OutgoingResponse, requestId: string): void {
  res.statusCode = response.statusCode;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.cookies.length > 0) res.setHeader('set-cookie', response.cookies);
  res.setHeader('apigw-requestid', requestId);
  res.setHeader('content-length', response.body.length);
}

/** One line of the deployed stage's access-log format, from what was captured on arrival. */
function accessLogLine(arrival: Arrival, response: OutgoingResponse): string {
  return JSON.stringify({
    requestId: arrival.requestId,
    ip: arrival.ip,
    requestTime: new Date(arrival.started).toISOString(),
    httpMethod: arrival.method,
    path: arrival.target.split('?')[0],
    protocol: arrival.protocol,
    status: response.statusCode,
    responseLength: response.body.length,
    responseLatency: Date.now() - arrival.started,
  });
}
