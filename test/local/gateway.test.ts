import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway } from '../../local/gateway';
import { readRequestTarget, type RequestTarget } from '../../local/request-target';
import { rawRequest, type RawRequest } from '../helpers/http';

/**
 * The local gateway against API Gateway's documented behaviour (HTTP API, payload format 2.0). The
 * functions are a stub that records the events and returns canned results: this tests the gateway,
 * not the handlers.
 */

type Event = Record<string, unknown> & {
  headers: Record<string, string>;
  requestContext: Record<string, unknown> & { http: Record<string, unknown> };
};

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8')) as Event;
const awsEvent = fixture('aws-http-api-v2-event.json');
const awsAuthorizerEvent = fixture('aws-http-api-v2-authorizer-event.json');

const AUTHORIZER_CONTEXT = { outcome: 'allowed', keyId: 'key_stub' };

let server: Server;
let port: number;
let invocations: Array<{ name: string; event: Event }>;
let authorize: () => unknown;
let integrate: (name: string) => unknown;

beforeAll(async () => {
  const functions = {
    async invoke(name: string, event: unknown) {
      invocations.push({ name, event: event as Event });
      return name === 'authorizer' ? authorize() : integrate(name);
    },
  };
  const gateway = createGateway({ functions });
  // The target as the local server reads it (local-api.ts), refusals aside: these requests all have one.
  server = createServer((req, res) => gateway(req, res, readRequestTarget(req) as RequestTarget));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});
beforeEach(() => {
  invocations = [];
  authorize = () => ({ isAuthorized: true, context: AUTHORIZER_CONTEXT });
  integrate = () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' });
});

function send(request: RawRequest) {
  return rawRequest(port, request);
}

/** The events of the last request: the authorizer's, then the integration's (if it was invoked). */
async function eventsOf(request: RawRequest): Promise<{ authorizerEvent: Event; event: Event; name: string }> {
  await send(request);
  const [first, second] = invocations;
  expect(first?.name).toBe('authorizer');
  expect(second).toBeDefined();
  return { authorizerEvent: first!.event, event: second!.event, name: second!.name };
}

/** Shape of a value: object keys (sorted) with the shape of each value; maps and arrays by element type. */
const MAPS = new Set(['headers', 'queryStringParameters', 'pathParameters', 'stageVariables', 'lambda']);
function shape(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return `array<${[...new Set(value.map((item) => typeof item))].sort().join('|') || 'string'}>`;
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  if (MAPS.has(key)) return `map<${[...new Set(Object.values(value).map((item) => typeof item))].sort().join('|')}>`;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((name) => [name, shape((value as Record<string, unknown>)[name], name)]),
  );
}

/**
 * AWS's examples show every optional field. `stageVariables` appears only when the stage defines
 * some, and `requestContext.authentication` only with mutual TLS: this API uses neither.
 */
function withoutUnusedFeatures(event: Event): Event {
  const { stageVariables: _stageVariables, ...rest } = event;
  const { authentication: _authentication, ...requestContext } = event.requestContext;
  return { ...rest, requestContext } as Event;
}

/** A request using every part of the payload: query (repeated), cookies, a body, a path parameter. */
const FULL_REQUEST: RawRequest = {
  method: 'GET',
  target: '/v1/pets/42?parameter1=value1&parameter1=value2&parameter2=value',
  headers: [
    ['Header1', 'value1'],
    ['Header2', 'value1'],
    ['Header2', 'value2'],
    ['Cookie', 'cookie1=a; cookie2=b'],
    ['User-Agent', 'agent'],
    ['Authorization', 'Bearer some-key'],
    ['Content-Type', 'application/json'],
  ],
  body: '{"hello":"from the client"}',
};

describe('the integration event (payload 2.0)', () => {
  it('has the same keys, and types, as AWS documents: top level, requestContext and http', async () => {
    const { event } = await eventsOf(FULL_REQUEST);
    const expected = withoutUnusedFeatures(awsEvent);
    expect(Object.keys(event).sort()).toEqual(Object.keys(expected).sort());
    expect(Object.keys(event.requestContext).sort()).toEqual(Object.keys(expected.requestContext).sort());
    expect(Object.keys(event.requestContext.http).sort()).toEqual(Object.keys(expected.requestContext.http).sort());
    expect(shape(event)).toEqual(shape(expected));
  });

  it('carries the request as API Gateway does', async () => {
    const { event, name } = await eventsOf(FULL_REQUEST);
    expect(name).toBe('getPet');
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: 'GET /v1/pets/{petId}',
      rawPath: '/v1/pets/42',
      rawQueryString: 'parameter1=value1&parameter1=value2&parameter2=value',
      cookies: ['cookie1=a', 'cookie2=b'],
      queryStringParameters: { parameter1: 'value1,value2', parameter2: 'value' },
      pathParameters: { petId: '42' },
      body: '{"hello":"from the client"}',
      isBase64Encoded: false,
    });
    expect(event.requestContext).toMatchObject({
      routeKey: 'GET /v1/pets/{petId}',
      stage: '$default',
      http: { method: 'GET', path: '/v1/pets/42', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'agent' },
      authorizer: { lambda: AUTHORIZER_CONTEXT },
    });
    expect(event.requestContext.time).toMatch(/^\d{2}\/[A-Z][a-z]{2}\/\d{4}:\d{2}:\d{2}:\d{2} \+0000$/);
    expect(Math.abs((event.requestContext.timeEpoch as number) - Date.now())).toBeLessThan(60_000);
  });

  it('carries an absolute-form target as its origin-form, its authority in place of the Host header (RFC 9112 §3.2.2)', async () => {
    const { authorizerEvent, event } = await eventsOf({
      target: 'http://pets.example:8080/v1/pets/42?a=1',
      headers: [
        ['Host', 'localhost'],
        ['Authorization', 'Bearer some-key'],
      ],
    });
    for (const each of [authorizerEvent, event]) {
      expect(each).toMatchObject({
        rawPath: '/v1/pets/42',
        rawQueryString: 'a=1',
        pathParameters: { petId: '42' },
        headers: { host: 'pets.example:8080' },
        requestContext: { domainName: 'pets.example', http: { path: '/v1/pets/42' } },
      });
    }
  });

  it('lower-cases header names and joins repeated headers with commas', async () => {
    const { event } = await eventsOf(FULL_REQUEST);
    expect(Object.keys(event.headers).every((name) => name === name.toLowerCase())).toBe(true);
    expect(event.headers).toMatchObject({ header1: 'value1', header2: 'value1,value2', 'user-agent': 'agent' });
  });

  it('moves cookies out of the headers into the cookies array', async () => {
    const { event } = await eventsOf({
      target: '/v1/pets',
      headers: [
        ['Cookie', 'a=1; b=2'],
        ['Cookie', 'c=3'],
      ],
    });
    expect(event.cookies).toEqual(['a=1', 'b=2', 'c=3']);
    expect(event.headers).not.toHaveProperty('cookie');
  });

  it('omits cookies, queryStringParameters, pathParameters and body when the request has none', async () => {
    const { event } = await eventsOf({ target: '/v1/pets' });
    for (const absent of ['cookies', 'queryStringParameters', 'pathParameters', 'body']) expect(event).not.toHaveProperty(absent);
    expect(event.rawQueryString).toBe('');
    expect(event.isBase64Encoded).toBe(false);
  });

  it('keeps the raw query string exactly as sent and decodes queryStringParameters', async () => {
    const { event } = await eventsOf({ target: '/v1/pets?limit=5&status=avail%61ble&name=a+b&name=c%2Cd&empty=' });
    expect(event.rawQueryString).toBe('limit=5&status=avail%61ble&name=a+b&name=c%2Cd&empty=');
    expect(event.queryStringParameters).toEqual({ limit: '5', status: 'available', name: 'a b,c,d', empty: '' });
  });

  it('keeps query parameters named like Object.prototype members as plain parameters', async () => {
    const { event } = await eventsOf({ target: '/v1/pets?__proto__=1&constructor=2&toString=3' });
    expect(Object.entries(event.queryStringParameters as object)).toEqual([
      ['__proto__', '1'],
      ['constructor', '2'],
      ['toString', '3'],
    ]);
  });

  it('keeps headers named like Object.prototype members as plain headers', async () => {
    const { event } = await eventsOf({
      target: '/v1/pets',
      headers: [
        ['Constructor', 'a'],
        ['__proto__', 'b'],
      ],
    });
    expect(Object.getOwnPropertyDescriptor(event.headers, 'constructor')?.value).toBe('a');
    expect(Object.getOwnPropertyDescriptor(event.headers, '__proto__')?.value).toBe('b');
  });

  it('joins a repeated query parameter with commas', async () => {
    const { event } = await eventsOf({ target: '/v1/pets?limit=5&limit=6' });
    expect(event.queryStringParameters).toEqual({ limit: '5,6' });
  });

  it.each([
    ['GET', '/v1/pets', 'GET /v1/pets', 'listPets'],
    ['POST', '/v1/pets', 'POST /v1/pets', 'createPet'],
    ['GET', '/v1/pets/7', 'GET /v1/pets/{petId}', 'getPet'],
    ['GET', '/v1/nope', '$default', 'routeNotFound'],
    ['DELETE', '/v1/pets', '$default', 'routeNotFound'],
    ['GET', '/v1/pets/', '$default', 'routeNotFound'],
  ])('routes %s %s as %s to %s', async (method, target, routeKey, expectedName) => {
    const { event, authorizerEvent, name } = await eventsOf({ method, target });
    expect(name).toBe(expectedName);
    expect(event.routeKey).toBe(routeKey);
    expect(event.requestContext.routeKey).toBe(routeKey);
    expect(authorizerEvent.routeKey).toBe(routeKey);
    expect(event.requestContext.http.method).toBe(method);
  });

  it.each([
    ['application/json', false],
    ['application/json; charset=utf-8', false],
    ['application/problem+json', false],
    ['text/plain', false],
    ['application/xml', false],
    ['application/octet-stream', true],
    ['application/x-www-form-urlencoded', true],
    ['image/png', true],
    [undefined, true],
  ])('passes a %s body base64-encoded: %s', async (contentType, base64) => {
    const body = Buffer.from([0x7b, 0x22, 0xc3, 0xa9, 0x22, 0x7d]); // {"é"}
    const { event } = await eventsOf({
      method: 'POST',
      target: '/v1/pets',
      headers: contentType === undefined ? [] : [['Content-Type', contentType]],
      body,
    });
    expect(event.isBase64Encoded).toBe(base64);
    expect(event.body).toBe(base64 ? body.toString('base64') : body.toString('utf8'));
  });

  it('passes a JSON body that is not valid UTF-8 base64-encoded, so no byte is lost', async () => {
    const body = Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]);
    const { event } = await eventsOf({
      method: 'POST',
      target: '/v1/pets',
      headers: [['Content-Type', 'application/json']],
      body,
    });
    expect(event.isBase64Encoded).toBe(true);
    expect(Buffer.from(event.body as string, 'base64')).toEqual(body);
  });

  it('uses one request id for the authorizer, the integration and the apigw-requestid header', async () => {
    const response = await send({ target: '/v1/pets' });
    const [authorizerInvocation, integration] = invocations;
    expect(authorizerInvocation!.event.requestContext.requestId).toBe(response.headers['apigw-requestid']);
    expect(integration!.event.requestContext.requestId).toBe(response.headers['apigw-requestid']);
  });

  it('adds one X-Ray trace header, seen by both the authorizer and the integration', async () => {
    const { authorizerEvent, event } = await eventsOf({ target: '/v1/pets' });
    expect(event.headers['x-amzn-trace-id']).toMatch(/^Root=1-[0-9a-f]{8}-[0-9a-f]{24}$/);
    expect(authorizerEvent.headers['x-amzn-trace-id']).toBe(event.headers['x-amzn-trace-id']);
  });

  it("keeps the client's own trace header", async () => {
    const { event } = await eventsOf({ target: '/v1/pets', headers: [['X-Amzn-Trace-Id', 'Root=1-5759e988-bd862e3fe1be46a994272793']] });
    expect(event.headers['x-amzn-trace-id']).toBe('Root=1-5759e988-bd862e3fe1be46a994272793');
  });
});

describe('the authorizer event (payload 2.0, REQUEST)', () => {
  it('has the same keys, and types, as AWS documents: top level, requestContext and http', async () => {
    const { authorizerEvent } = await eventsOf(FULL_REQUEST);
    const expected = withoutUnusedFeatures(awsAuthorizerEvent);
    expect(Object.keys(authorizerEvent).sort()).toEqual(Object.keys(expected).sort());
    expect(Object.keys(authorizerEvent.requestContext).sort()).toEqual(Object.keys(expected.requestContext).sort());
    expect(shape(authorizerEvent)).toEqual(shape(expected));
  });

  it('carries the route, the headers (Authorization included) and the identity sources', async () => {
    const { authorizerEvent } = await eventsOf(FULL_REQUEST);
    expect(authorizerEvent).toMatchObject({
      version: '2.0',
      type: 'REQUEST',
      routeKey: 'GET /v1/pets/{petId}',
      rawPath: '/v1/pets/42',
      identitySource: [],
      pathParameters: { petId: '42' },
    });
    expect(authorizerEvent.routeArn).toMatch(/^arn:aws:execute-api:[\w-]+:\d{12}:[\w-]+\/\$default\/GET\/v1\/pets\/42$/);
    expect(authorizerEvent.headers.authorization).toBe('Bearer some-key');
    expect(authorizerEvent).not.toHaveProperty('body');
    expect(authorizerEvent).not.toHaveProperty('isBase64Encoded');
  });
});

describe('results, mapped as API Gateway maps them', () => {
  it('uses a structured result as given: status, headers, body', async () => {
    integrate = () => ({ statusCode: 418, headers: { 'Content-Type': 'text/plain', 'X-Custom': 'yes' }, body: 'teapot' });
    const response = await send({ target: '/v1/pets' });
    expect(response.status).toBe(418);
    expect(response.headers['content-type']).toBe('text/plain');
    expect(response.headers['x-custom']).toBe('yes');
    expect(response.body.toString()).toBe('teapot');
  });

  it('turns each cookie of the result into its own Set-Cookie header', async () => {
    integrate = () => ({ statusCode: 200, headers: {}, body: '', cookies: ['a=1; Path=/', 'b=2; HttpOnly'] });
    const response = await send({ target: '/v1/pets' });
    expect(response.headers['set-cookie']).toEqual(['a=1; Path=/', 'b=2; HttpOnly']);
  });

  it('decodes a base64-encoded result body', async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    integrate = () => ({
      statusCode: 200,
      headers: { 'content-type': 'application/octet-stream' },
      body: bytes.toString('base64'),
      isBase64Encoded: true,
    });
    const response = await send({ target: '/v1/pets' });
    expect(response.body.equals(bytes)).toBe(true);
  });

  it('answers an object without statusCode as a 200 JSON body', async () => {
    integrate = () => ({ message: 'Hello from Lambda!', count: 2 });
    const response = await send({ target: '/v1/pets' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Hello from Lambda!', count: 2 });
  });

  it('answers a string result as a 200 JSON body', async () => {
    integrate = () => 'Hello from Lambda!';
    const response = await send({ target: '/v1/pets' });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/json');
    expect(response.body.toString()).toBe('Hello from Lambda!');
  });

  it('answers 403 {"message":"Forbidden"} itself when the authorizer says no, without invoking the route', async () => {
    authorize = () => ({ isAuthorized: false, context: {} });
    const response = await send({ target: '/v1/pets' });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Forbidden' });
    expect(invocations.map((invocation) => invocation.name)).toEqual(['authorizer']);
  });

  it('answers 500 {"message":"Internal Server Error"} itself when the authorizer throws', async () => {
    authorize = () => {
      throw new Error('authorizer crashed');
    };
    const response = await send({ target: '/v1/pets' });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Internal Server Error' });
    expect(invocations.map((invocation) => invocation.name)).toEqual(['authorizer']);
  });

  it('answers 500 {"message":"Internal Server Error"} itself when the route function throws', async () => {
    integrate = () => {
      throw new Error('handler crashed');
    };
    const response = await send({ target: '/v1/pets' });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Internal Server Error' });
    expect(response.body.toString()).not.toContain('crashed');
  });
});

describe('how long the gateway waits', () => {
  const waitsMs = { authorizer: 200, integration: 2_000 };
  let slowServer: Server;
  let slowPort: number;
  let authorizerAnswersAfterMs: number;
  let routeAnswersAfterMs: number;
  const invoked: string[] = [];
  const later = (ms: number, value: unknown) => new Promise((resolve) => setTimeout(() => resolve(value), ms));

  beforeAll(async () => {
    const functions = {
      invoke: (name: string) =>
        invoked.push(name) && name === 'authorizer'
          ? later(authorizerAnswersAfterMs, { isAuthorized: true, context: AUTHORIZER_CONTEXT })
          : later(routeAnswersAfterMs, { statusCode: 200, body: '{"ok":true}' }),
    };
    const gateway = createGateway({ functions, waitsMs });
    slowServer = createServer((req, res) => gateway(req, res, readRequestTarget(req) as RequestTarget));
    await new Promise<void>((resolve) => slowServer.listen(0, '127.0.0.1', resolve));
    slowPort = (slowServer.address() as AddressInfo).port;
  });
  afterAll(async () => {
    slowServer?.closeAllConnections();
    await new Promise((resolve) => slowServer?.close(resolve));
  });

  it('answers 500 itself when the authorizer outlives its shorter wait, and never invokes the route', async () => {
    authorizerAnswersAfterMs = waitsMs.authorizer * 3;
    routeAnswersAfterMs = 0;
    invoked.length = 0;
    const response = await rawRequest(slowPort, { target: '/v1/pets' });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body.toString())).toEqual({ message: 'Internal Server Error' });
    await later(authorizerAnswersAfterMs, undefined);
    expect(invoked).toEqual(['authorizer']);
  });

  it('waits for a route function longer than the authorizer may take', async () => {
    authorizerAnswersAfterMs = 0;
    routeAnswersAfterMs = waitsMs.authorizer * 3;
    const response = await rawRequest(slowPort, { target: '/v1/pets' });
    expect(response.status).toBe(200);
  });
});
