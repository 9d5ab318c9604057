import { request as httpRequest } from 'node:http';
import { buffer } from 'node:stream/consumers';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import * as v from 'valibot';
import { LOCAL_TABLES } from '../local/dynamodb-local';
import { LISTING } from '../shared/facts/listing';
import { DynamoPetStore } from '../shared/dynamodb/dynamo-pet-store';
import { ErrorSchema } from '../shared/http/error-schema';
import { MAX_BODY_BYTES } from '../shared/http/request';
import { MAX_ID, NAME_MAX_LENGTH, PET_STATUSES } from '../shared/domain/pets/pet-schemas';
import { BASE_PATH, routes } from '../shared/facts/routes';

// The standing fuzz suite, for `npm test` (test/api/fuzz.test.ts) and `npm run fuzz`: every case is one raw HTTP
// request to the local API, which is `npm start`: the real gateway, authorizer, handlers and dynalite.

export type KeyKind = 'valid' | 'none' | 'wrong' | 'malformed';

export interface FuzzRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly target: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
  readonly key: KeyKind;
}

export interface FuzzAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Buffer;
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const QUERY_NAMES = ['limit', 'status', 'cursor', 'stauts', 'petId', '__proto__', 'constructor', 'a'];

/** Path segments: the route table's own paths with their parameters filled, mutated, and unknown ones. */
const pathArbitrary: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .constantFrom(...routes.map((route) => route.path))
      .chain((path) =>
        path.includes('{petId}')
          ? fc
              .oneof(
                fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String),
                fc.constantFrom('007', 'abc', '-1', '1.0', '1e3', '%00', '__proto__', 'constructor', ''),
                fc.stringMatching(/^[A-Za-z0-9._~%-]{0,20}$/),
              )
              .map((id) => path.replace('{petId}', id))
          : fc.constant(path),
      ),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom('/pets/', '/pets//1', '/pets/1/owner', '/', '', '/nope', '/pets/%2e%2e', '/__proto__', '/pets/constructor'),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^(\/[A-Za-z0-9._~%-]{0,12}){1,4}$/) },
);

const queryArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.tuple(
          fc.oneof(fc.constantFrom(...QUERY_NAMES), fc.stringMatching(/^[A-Za-z0-9_.-]{1,8}$/)),
          fc.oneof(
            fc.constantFrom('1', '01', '100', '101', '0', '-1', '1.5', 'available', 'sold', 'nope', '', 'eyJ2IjoxfQ.c2ln'),
            fc.string({ maxLength: 40 }),
          ),
        ),
        { maxLength: 3 },
      )
      .map((pairs) => (pairs.length === 0 ? '' : `?${new URLSearchParams(pairs).toString()}`)),
  },
);

/** Ways to spoil a valid pet's JSON: `json` is the pet's, `value` any JSON value. */
const MUTATIONS: Record<string, (pet: object, json: string, value: unknown) => string> = {
  drop: (pet) => JSON.stringify({ ...pet, name: undefined }),
  extra: (pet, _, value) => JSON.stringify({ ...pet, id: value }),
  'wrong-type': (pet, _, value) => JSON.stringify({ ...pet, categoryId: value }),
  proto: (_, json) => `{"__proto__":{"polluted":true},${json.slice(1)}`,
  constructor: (_: object, json: string) => `{"constructor":{"prototype":{"polluted":true}},${json.slice(1)}`,
  duplicate: (_, json) => `{"name":"first",${json.slice(1)}`,
  float: (_, json) => json.replace(/"categoryId":(\d+)/, '"categoryId":$1.0'),
  huge: (_, json) => json.replace(/"categoryId":\d+/, '"categoryId":9007199254740993'),
  surrogate: (_, json) => json.replace(/"name":"/, '"name":"\\ud800'),
};

const validPetArbitrary = fc.record(
  {
    name: fc.string({ unit: 'grapheme', minLength: 1, maxLength: NAME_MAX_LENGTH }),
    categoryId: fc.integer({ min: 1, max: MAX_ID }),
    status: fc.constantFrom(...PET_STATUSES),
  },
  { requiredKeys: ['name', 'categoryId'] },
);

/** Text bodies: valid pets, mutated ones, arbitrary JSON, hostile shapes, and sizes around the limit. */
const textBodyArbitrary: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: validPetArbitrary.map((pet) => JSON.stringify(pet)) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(validPetArbitrary, fc.constantFrom(...Object.keys(MUTATIONS)), fc.jsonValue())
      .map(([pet, mutation, value]) => MUTATIONS[mutation]!(pet, JSON.stringify(pet), value)),
  },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 6 }).map((value) => JSON.stringify(value) ?? 'null') },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 1, max: 3_000 })
      .map((depth) => `{"name":"Deep","categoryId":1,"x":${'['.repeat(depth)}${']'.repeat(depth)}}`),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: -64, max: 64 }).map((delta) => {
      const skeleton = '{"name":"","categoryId":1}';
      return `{"name":"${'a'.repeat(Math.max(0, MAX_BODY_BYTES + delta - skeleton.length))}","categoryId":1}`;
    }),
  },
);

const bodyArbitrary: fc.Arbitrary<Buffer | undefined> = fc.oneof(
  { weight: 8, arbitrary: textBodyArbitrary.map((text) => Buffer.from(text)) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const contentTypeArbitrary = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/merge-patch+json',
      'text/plain',
      'application/json; charset=latin1',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** Creates as a well-behaved client sends them, so the run also exercises what a 201 stores. */
const wellFormedCreateArbitrary: fc.Arbitrary<FuzzRequest> = fc
  .tuple(validPetArbitrary, fc.option(fc.uuid(), { freq: 2 }))
  .map(([pet, idempotencyKey]) => ({
    method: 'POST',
    target: `${BASE_PATH}/pets`,
    headers: { 'content-type': 'application/json', ...(idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey }) },
    body: Buffer.from(JSON.stringify(pet)),
    key: 'valid' as const,
  }));

const anyRequestArbitrary: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('GET', 'POST') }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    path: pathArbitrary,
    query: queryArbitrary,
    key: fc.oneof(
      { weight: 6, arbitrary: fc.constant<KeyKind>('valid') },
      { weight: 1, arbitrary: fc.constantFrom<KeyKind>('none', 'wrong', 'malformed') },
    ),
    contentType: contentTypeArbitrary,
    idempotencyKey: fc.option(fc.oneof(fc.uuid(), fc.string({ maxLength: 300 }), fc.constantFrom('reused-key', '')), { freq: 4 }),
    encoding: fc.option(fc.constantFrom('gzip', 'identity', 'br'), { freq: 10 }),
    body: bodyArbitrary,
  })
  .map(({ method, path, query, key, contentType, idempotencyKey, encoding, body }) => {
    const headers: Record<string, string> = {};
    if (contentType !== undefined) headers['content-type'] = contentType;
    // Node's client refuses header values with control characters: those are the server's to refuse, not ours to send.
    if (idempotencyKey !== null && /^[\t\x20-\x7e]*$/.test(idempotencyKey)) headers['idempotency-key'] = idempotencyKey;
    if (encoding !== null) headers['content-encoding'] = encoding;
    const sendBody = method === 'GET' || method === 'OPTIONS' || method === 'DELETE' ? undefined : body;
    return { method, target: `${BASE_PATH}${path}${query}`, headers, ...(sendBody ? { body: sendBody } : {}), key };
  });

export function requestArbitrary(): fc.Arbitrary<FuzzRequest> {
  return fc.oneof({ weight: 1, arbitrary: wellFormedCreateArbitrary }, { weight: 4, arbitrary: anyRequestArbitrary });
}

/** Sends one case as raw HTTP, with the key it calls for. */
export function send(baseUrl: string, apiKey: string, request: FuzzRequest): Promise<FuzzAnswer> {
  const url = new URL(baseUrl);
  const headers: Record<string, string> = { ...request.headers, connection: 'close' };
  if (request.key === 'valid') headers.authorization = `Bearer ${apiKey}`;
  if (request.key === 'wrong') headers.authorization = 'Bearer pets_notAKeyOfThisServer0123456789abcdefghijk';
  if (request.key === 'malformed') headers.authorization = `Basic ${Buffer.from('user:pass').toString('base64')}`;
  if (request.body) headers['content-length'] = String(request.body.length);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, method: request.method, path: request.target, headers }, (res) =>
      buffer(res).then((body) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }), reject),
    );
    req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', reject);
    req.end(request.body);
  });
}

/** The newest pet's id: what a request that stored a pet changes (one page of one, read as listPets reads it). */
export async function newestPetId(client: DynamoDBDocumentClient): Promise<number | undefined> {
  const { pets } = await new DynamoPetStore(client, LOCAL_TABLES.pets, LISTING.shards).list({ limit: 1 });
  return pets[0]?.id;
}

const PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort().join();

/**
 * Every property one case must hold; a thrown Error names the one that broke. `before` is the newest
 * pet's id before the request.
 */
export async function checkCase(
  client: DynamoDBDocumentClient,
  request: FuzzRequest,
  answer: FuzzAnswer,
  before: number | undefined,
): Promise<void> {
  const text = answer.body.toString('utf8');
  if (answer.status >= 500) throw new Error(`a ${answer.status}: ${text.slice(0, 300)}`);
  if (request.key !== 'valid' && answer.status !== 401) throw new Error(`a caller without a valid key got ${answer.status}, not 401`);
  if (answer.status >= 400) {
    if (!/^application\/json\b/.test(String(answer.headers['content-type'])))
      throw new Error(`error ${answer.status} without JSON Content-Type`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`error ${answer.status} whose body is not JSON: ${text.slice(0, 200)}`);
    }
    const keys = typeof body === 'object' && body !== null ? Object.keys(body).sort().join() : '';
    if (!v.is(ErrorSchema, body) || keys !== 'code,message,status' || (body as { status: number }).status !== answer.status) {
      throw new Error(`error ${answer.status} without the Error body: ${text.slice(0, 200)}`);
    }
  }
  const after = await newestPetId(client);
  if (answer.status === 201) {
    const pet = JSON.parse(text) as { id: number };
    const { Item } = await client.send(new GetCommand({ TableName: LOCAL_TABLES.pets, Key: { id: pet.id } }));
    // JSON leaves out an undefined status, as the 201 does an absent one.
    const stored = Item && { id: Item.id, name: Item.name, categoryId: Item.categoryId, status: Item.status };
    if (JSON.stringify(stored) !== JSON.stringify(pet)) throw new Error(`a 201 returned ${text} but stored ${JSON.stringify(stored)}`);
  } else if (after !== before) {
    throw new Error(`a ${answer.status} stored pet ${after}`);
  }
  const polluted = ({} as Record<string, unknown>).polluted;
  if (polluted !== undefined || Object.getOwnPropertyNames(Object.prototype).sort().join() !== PROTOTYPE_KEYS) {
    throw new Error('Object.prototype was polluted');
  }
}

/** The case as a curl command against `npm start`, for a reader to reproduce it. */
export function curlFor(request: FuzzRequest, baseUrl = 'http://localhost:3000'): string {
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const parts = ['curl', '-i', '-X', request.method, quote(`${new URL(baseUrl).origin}${request.target}`)];
  for (const [name, value] of Object.entries(request.headers)) parts.push('-H', quote(`${name}: ${value}`));
  if (request.key === 'valid') parts.push('-H', '"Authorization: Bearer $API_KEY"');
  if (request.key === 'wrong') parts.push('-H', quote('Authorization: Bearer pets_notAKeyOfThisServer0123456789abcdefghijk'));
  if (request.key === 'malformed') parts.push('-H', quote(`Authorization: Basic ${Buffer.from('user:pass').toString('base64')}`));
  if (request.body) {
    const text = request.body.toString('utf8');
    const printable = Buffer.from(text, 'utf8').equals(request.body) && text.length < 2_000;
    parts.push('--data-binary', printable ? quote(text) : `@<(printf %s ${quote(request.body.toString('base64'))} | base64 -d)`);
  }
  return parts.join(' ');
}
