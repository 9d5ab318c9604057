import {
  toJsonSchema,
  toJsonSchemaDefs,
  type ConversionConfig,
  type JsonSchema,
  type OverrideSchemaContext,
} from '@valibot/to-json-schema';
import * as v from 'valibot';
import {
  ApiError,
  InternalError,
  InvalidBodyError,
  InvalidParameterError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from '../http/errors';
import { ERROR_CODES, type ErrorCode } from '../facts/error-codes';
import { deprecationHeaderValues } from '../http/deprecation-headers';
import { ErrorSchema } from '../http/error-schema';
import { MAX_BODY_BYTES } from '../http/request';
import { toApiError } from '../http/responses';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../domain/idempotency/idempotency-errors';
import { IDEMPOTENCY_KEY_HEADER, IdempotencyKeySchema } from '../domain/idempotency/idempotency-key';
import { PetListSchema, PetSchema } from '../domain/pets/pet-output-schemas';
import { NewPetSchema, PetStatusSchema } from '../domain/pets/pet-schemas';
import { InvalidCursorError, PetNotFoundError } from '../domain/pets/pet-errors';
import { BASE_PATH, ROUTE_ERRORS, routes, type Deprecation, type OperationId, type Route, type SuccessStatus } from '../facts/routes';
import { schemasOf } from '../catalog/function-catalog';
import type { OperationProse } from '../operations/operation';
import { OPERATIONS } from '../operations/operations';

/**
 * The OpenAPI 3.1 document, built from the route table and the valibot schemas the handlers
 * validate with, so it cannot drift from the code. `npm run openapi` writes it to openapi.json.
 */

/** The interface version; the `/v1` path segment is its major version. */
export const API_VERSION = '1.0.0';

type JsonObject = Record<string, unknown>;

/** Named schemas: referenced as #/components/schemas/<name> wherever the same valibot schema appears. */
const NAMED_SCHEMAS = {
  Pet: PetSchema,
  NewPet: NewPetSchema,
  Pets: PetListSchema,
  PetStatus: PetStatusSchema,
  Error: ErrorSchema,
};

const conversion: ConversionConfig = {
  target: 'draft-2020-12',
  // The name-length check counts code points; its JSON Schema form is given by metadata.
  ignoreActions: ['check'],
  definitions: NAMED_SCHEMAS,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
};

function schemaOf(schema: v.GenericSchema, typeMode: 'input' | 'output'): JsonObject {
  const overrideSchema = typeMode === 'output' ? parsedDefault : undefined;
  const { $schema: _, $defs: __, ...json } = toJsonSchema(schema, { ...conversion, typeMode, overrideSchema }) as JsonObject;
  return json;
}

/** An optional value's default as the schema parses it (the limit's 20), not as the text it is given in (`"20"`). */
function parsedDefault({ valibotSchema, jsonSchema }: OverrideSchemaContext): JsonSchema | undefined {
  if (valibotSchema.type !== 'optional' || (valibotSchema as v.OptionalSchema<v.GenericSchema, unknown>).default === undefined)
    return undefined;
  return { ...jsonSchema, default: v.parse(valibotSchema, undefined) as JsonSchema['default'] };
}

/** An operation's prose and examples, from its file of shared/operations/; everything structural comes from its route and schemas. */
function proseOf(operationId: OperationId): OperationProse {
  return OPERATIONS[operationId].prose;
}

/** One example error per code, made by the very classes the service throws. */
const ERROR_EXAMPLES: Record<ErrorCode, ApiError> = {
  invalid_body: new InvalidBodyError('The request body is not valid JSON.'),
  invalid_parameter: new InvalidParameterError('name must be a string of 1 to 200 characters.'),
  invalid_cursor: toApiError(new InvalidCursorError()),
  unauthorized: new UnauthorizedError('invalid'),
  not_found: toApiError(new PetNotFoundError(4249774335723539)),
  method_not_allowed: new ApiError('method_not_allowed', 'DELETE is not allowed here; use GET or POST.'),
  idempotency_key_in_use: toApiError(new IdempotencyKeyInUseError()),
  payload_too_large: new PayloadTooLargeError(MAX_BODY_BYTES),
  unsupported_media_type: new UnsupportedMediaTypeError(),
  idempotency_key_reused: toApiError(new IdempotencyKeyReusedError()),
  internal_error: new InternalError(),
  service_unavailable: new ServiceUnavailableError(),
};

const STATUS_TEXT: Record<number, string> = {
  400: 'The request is invalid',
  401: 'The API key is missing, malformed, unknown or revoked',
  404: 'The pet does not exist',
  409: 'A request with the same Idempotency-Key is still in progress; retry after `Retry-After` seconds',
  413: 'The request body is too large',
  415: 'The request body is not JSON, or is compressed',
  422: 'The Idempotency-Key was already used with a different body',
  500: 'The service failed',
  503: 'The service is temporarily unavailable',
};

/**
 * Answers API Gateway gives itself, before our code runs or instead of its answer, with its own body
 * `{"message": …}` rather than our Error: it owns the stage's throttle, its payload limit and the
 * integration's failures. Documented so clients handle them, above all 429.
 */
const GATEWAY_ANSWERS: Record<number, { when: string; message: string }> = {
  413: { when: 'a request body over its own 10 MiB limit', message: 'Request Entity Too Large' },
  429: { when: "the stage's request throttle is exceeded; retry with backoff", message: 'Too Many Requests' },
  500: { when: 'the authorizer or a function failed without answering', message: 'Internal Server Error' },
  503: { when: 'a function did not answer in time', message: 'Service Unavailable' },
};

/** Headers an error carries, by code. */
const ERROR_HEADERS: Partial<Record<ErrorCode, JsonObject>> = {
  unauthorized: { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } },
  service_unavailable: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
  idempotency_key_in_use: { 'Retry-After': { $ref: '#/components/headers/Retry-After' } },
};

const DEPRECATION_HEADERS = {
  Deprecation: { $ref: '#/components/headers/Deprecation' },
  Sunset: { $ref: '#/components/headers/Sunset' },
  Link: { $ref: '#/components/headers/Successor-Link' },
};

function errorResponses(route: Route): Record<string, JsonObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...route.errors, ...ROUTE_ERRORS]) {
    byStatus.set(ERROR_CODES[code], [...(byStatus.get(ERROR_CODES[code]) ?? []), code]);
  }
  const responses: Record<string, JsonObject> = {};
  for (const status of Object.keys(GATEWAY_ANSWERS).map(Number)) if (!byStatus.has(status)) byStatus.set(status, []);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    if (codes.length === 0) {
      responses[String(status)] = { $ref: `#/components/responses/Gateway${status}` };
      continue;
    }
    const headers = {
      ...Object.assign({}, ...codes.map((code) => ERROR_HEADERS[code] ?? {})),
      ...(route.deprecation ? DEPRECATION_HEADERS : {}),
    };
    const gateway = GATEWAY_ANSWERS[status];
    responses[String(status)] = {
      description:
        `${STATUS_TEXT[status]}: \`code\` is ${codes.map((code) => `\`${code}\``).join(' or ')}.` +
        (gateway
          ? ` API Gateway may also answer ${status} itself (${gateway.when}), with its own body \`{"message": …}\`: see GatewayError.`
          : ''),
      ...(Object.keys(headers).length > 0 ? { headers } : {}),
      content: {
        'application/json': {
          schema: gateway
            ? { oneOf: [{ $ref: '#/components/schemas/Error' }, { $ref: '#/components/schemas/GatewayError' }] }
            : { $ref: '#/components/schemas/Error' },
          examples: Object.fromEntries(
            codes.map((code) => {
              const specific = proseOf(route.operationId).invalidParameterExample;
              const error = code === 'invalid_parameter' && specific ? new InvalidParameterError(specific) : ERROR_EXAMPLES[code];
              return [code, { value: { code: error.code, message: error.message, status: error.status } }];
            }),
          ),
        },
      },
    };
  }
  return responses;
}

function parameters(route: Route): JsonObject[] {
  const list: JsonObject[] = [];
  const schemas = schemasOf(route.operationId);
  for (const [location, schema] of [
    ['path', schemas.path],
    ['query', schemas.query],
    ['header', route.idempotent ? v.object({ [IDEMPOTENCY_KEY_HEADER]: v.optional(IdempotencyKeySchema) }) : undefined],
  ] as const) {
    if (!schema) continue;
    const object = schemaOf(schema, 'output') as { properties: Record<string, JsonObject>; required?: string[] };
    for (const [name, property] of Object.entries(object.properties)) {
      const { description, ...propertySchema } = property;
      list.push({
        // Header names are case-insensitive; the document writes them as clients usually do.
        name:
          location === 'header' ? name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase()) : name,
        in: location,
        required: object.required?.includes(name) ?? false,
        description: description ?? proseOf(route.operationId).parameters?.[name],
        schema: propertySchema,
      });
    }
  }
  return list;
}

/** A success response's description by status, where 'OK' would say too little. */
const SUCCESS_TEXT: Partial<Record<SuccessStatus, string>> = {
  201: 'The pet was added.',
  204: 'Done. The response has no body.',
};

function successResponse(route: Route): JsonObject {
  const headers: JsonObject = route.deprecation ? { ...DEPRECATION_HEADERS } : {};
  if (route.paginated) headers.Link = { $ref: '#/components/headers/Next-Link' };
  if (route.successStatus === 201) headers.Location = { $ref: '#/components/headers/Location' };
  if (route.idempotent) headers['Idempotent-Replayed'] = { $ref: '#/components/headers/Idempotent-Replayed' };
  return {
    description: SUCCESS_TEXT[route.successStatus] ?? 'OK',
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    ...(route.successStatus === 204 ? {} : { content: { 'application/json': successContent(route.operationId) } }),
  };
}

/** The success body's schema and example; the catalog gives a response schema to every route but a 204. */
function successContent(operationId: OperationId): JsonObject {
  const schema = schemasOf(operationId).response;
  if (schema === undefined) throw new Error(`${operationId} has no response schema in the function catalog`);
  return { schema: schemaOf(schema, 'output'), example: proseOf(operationId).examples.response };
}

function operation(route: Route): JsonObject {
  const prose = proseOf(route.operationId);
  const schemas = schemasOf(route.operationId);
  return {
    operationId: route.operationId,
    summary: prose.summary,
    description: prose.description,
    tags: ['pets'],
    security: [{ apiKey: [] }],
    ...(route.deprecation
      ? {
          deprecated: true,
          'x-sunset': route.deprecation.sunset.toISOString().slice(0, 10),
          'x-replacement': `GET ${route.deprecation.successorPath}`,
        }
      : {}),
    ...(schemas.query || schemas.path || route.idempotent ? { parameters: parameters(route) } : {}),
    ...(schemas.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: schemaOf(schemas.body, 'input'), example: prose.examples.request },
            },
          },
        }
      : {}),
    responses: { [String(route.successStatus)]: successResponse(route), ...errorResponses(route) },
  };
}

const ERROR_CODE_TABLE = [
  '| Status | `code` |',
  '|---|---|',
  ...Object.entries(ERROR_CODES).map(([code, status]) => `| ${status} | \`${code}\` |`),
].join('\n');

/** A schema that admits exactly the given values: `const` for one, `enum` for several. */
function exactly(values: readonly string[]): JsonObject {
  const distinct = [...new Set(values)];
  return distinct.length === 1 ? { const: distinct[0] } : { enum: distinct };
}

/**
 * The headers every response of a deprecated operation carries, as components the operations refer to;
 * none when no operation is deprecated, so removing the last one leaves no trace of them.
 */
function deprecationHeaders(deprecations: readonly Deprecation[]): JsonObject {
  if (deprecations.length === 0) return {};
  const values = deprecations.map(deprecationHeaderValues);
  const successorPaths = [...new Set(deprecations.map((deprecation) => deprecation.successorPath))];
  const escaped = successorPaths.map((path) => path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return {
    Deprecation: {
      description: 'RFC 9745: when this operation was deprecated, as `@<epoch seconds>`.',
      required: true,
      schema: { type: 'string', ...exactly(values.map((value) => value.deprecation)) },
    },
    Sunset: {
      description: 'RFC 8594: when this operation stops working.',
      required: true,
      schema: { type: 'string', ...exactly(values.map((value) => value.sunset)) },
    },
    'Successor-Link': {
      description: `Link to the operation that replaces this one: ${successorPaths
        .map((path) => `\`<…${BASE_PATH}${path}>; rel="successor-version"\``)
        .join(' or ')}.`,
      required: true,
      schema: {
        type: 'string',
        pattern: `^<[^>]+${escaped.length === 1 ? escaped[0] : `(?:${escaped.join('|')})`}>; rel="successor-version"$`,
      },
    },
  };
}

/** Where the API is served: an OpenAPI Server Object. */
export interface OpenApiServer {
  readonly url: string;
  readonly description: string;
  /** True for servers that are not for the API's clients (a staging stage, a developer's machine). */
  readonly 'x-internal'?: boolean;
  readonly variables?: Readonly<Record<string, { readonly default: string; readonly description: string }>>;
}

/**
 * The OpenAPI document of a route table (the real one unless a test asks what another would give),
 * served from `servers`: the deployed stages' URLs live in infra/, which this layer does not read.
 */
export function buildOpenApiDocument(servers: readonly OpenApiServer[], table: readonly Route[] = routes): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of table) {
    paths[route.path] = { ...paths[route.path], [route.method.toLowerCase()]: operation(route) };
  }
  const deprecated = table.flatMap((route) => (route.deprecation ? [{ route, deprecation: route.deprecation }] : []));
  const retirements = deprecated.map(
    ({ route, deprecation }) =>
      ` \`${route.method} ${BASE_PATH}${route.path}\` is deprecated\nand will be removed on ${deprecation.sunset.toUTCString().slice(5, 16)}.`,
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Animal store API',
      version: API_VERSION,
      summary: `Pets offered in a store: ${table.map((route) => proseOf(route.operationId).gist).join(', ')}.`,
      description: [
        'An HTTP and JSON API that manages the animals ("pets") offered in a store.',
        '',
        '**Authentication.** Every operation requires an API key sent as `Authorization: Bearer <API key>`.',
        'A missing, malformed, unknown or revoked key is answered `401 unauthorized` before any other check.',
        '',
        '**Errors.** Every error response has the body `{"code", "message", "status"}`, with `status` equal to the',
        'HTTP status. `code` is stable and meant for programs:',
        '',
        ERROR_CODE_TABLE,
        '',
        'A path that no operation serves is `404 not_found`; a known path with another method is',
        '`405 method_not_allowed` with an `Allow` header.',
        '',
        `**Versioning.** The base URL ends in the major version, \`${BASE_PATH}\`.${retirements.join('')}`,
      ].join('\n'),
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'Animal store API team' },
    },
    servers,
    security: [{ apiKey: [] }],
    tags: [{ name: 'pets', description: 'Animals offered in the store.' }],
    paths,
    components: {
      schemas: {
        ...toJsonSchemaDefs(NAMED_SCHEMAS, conversion),
        GatewayError: {
          type: 'object',
          description:
            'The body of answers API Gateway gives itself, not our code: 429 when throttled, 413 over its 10 MiB limit, ' +
            '500 and 503 when a function fails or does not answer. Only `message`, a fixed English phrase.',
          required: ['message'],
          properties: { message: { type: 'string', examples: ['Too Many Requests'] } },
          additionalProperties: false,
        },
      },
      // Only the statuses some operation can get from API Gateway alone: the others are documented inline.
      responses: Object.fromEntries(
        Object.entries(GATEWAY_ANSWERS)
          .filter(([status]) => !ROUTE_ERRORS.some((code) => ERROR_CODES[code] === Number(status)))
          .map(([status, { when, message }]) => [
            `Gateway${status}`,
            {
              description: `Answered by API Gateway itself when ${when}, with its own body, not the Error body.`,
              content: { 'application/json': { schema: { $ref: '#/components/schemas/GatewayError' }, example: { message } } },
            },
          ]),
      ),
      securitySchemes: {
        apiKey: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'API key',
          description: 'An API key issued by the operators (`npm run keys -- create`), sent as a bearer token.',
        },
      },
      headers: {
        'Next-Link': {
          description:
            'RFC 8288 link to the next page, present only when more pets match: `<https://…/v1/pets?limit=20&cursor=…>; rel="next"`.',
          schema: { type: 'string', example: '<https://api.example.com/v1/pets?limit=20&cursor=eyJ2IjoxfQ.c2ln>; rel="next"' },
        },
        'Idempotent-Replayed': {
          description:
            'Present, as `true`, when this is the stored answer of an earlier request with the same Idempotency-Key: no new pet was created.',
          schema: { type: 'string', const: 'true' },
        },
        Location: {
          description: 'URL of the new pet.',
          required: true,
          schema: { type: 'string', format: 'uri', example: 'https://api.example.com/v1/pets/4249774335723539' },
        },
        ...deprecationHeaders(deprecated.map(({ deprecation }) => deprecation)),
        'WWW-Authenticate': {
          description: 'RFC 6750 challenge; `error="invalid_token"` is added when a token was sent.',
          required: true,
          schema: { type: 'string', example: 'Bearer realm="animal-store", error="invalid_token"' },
        },
        'Retry-After': {
          description: 'Seconds to wait before retrying.',
          required: true,
          schema: { type: 'string', pattern: '^\\d+$', example: '1' },
        },
      },
    },
  };
}
