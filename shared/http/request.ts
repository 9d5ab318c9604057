import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import * as v from 'valibot';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENCY_KEY_MAX_LENGTH, IdempotencyKeySchema } from '../domain/idempotency/idempotency-key';
import { InvalidBodyError, InvalidParameterError, PayloadTooLargeError, UnsupportedMediaTypeError } from './errors';
import { parseJsonBody } from './json-body';

/** Largest accepted request body. A pet is well under 1 KiB; anything near this is a mistake or abuse. */
export const MAX_BODY_BYTES = 16 * 1024;

/** Matched against the lower-cased media type: a case-insensitive expression has V8 load Unicode case-folding tables. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

/** Strict: a body that is not UTF-8 is refused, never patched with U+FFFD. Stateless between calls. */
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a JSON object body, checking in the order a client can fix things: size, presence, media type and
 * encoding, then syntax and shape. Compressed bodies are refused: small bodies gain nothing, and a decoder
 * invites decompression bombs.
 */
export function readJsonObject(event: APIGatewayProxyEventV2): Record<string, unknown> {
  const bytes = event.body === undefined ? Buffer.alloc(0) : Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8');
  if (bytes.length > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  if (bytes.length === 0) throw new InvalidBodyError('A JSON request body is required.');
  if (!isJsonContentType(event.headers['content-type'])) throw new UnsupportedMediaTypeError();
  const encoding = event.headers['content-encoding']?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    throw new UnsupportedMediaTypeError(`Content-Encoding ${JSON.stringify(encoding)} is not supported: send the body uncompressed.`);
  }

  let text: string;
  try {
    text = UTF8.decode(bytes);
  } catch {
    throw new InvalidBodyError('The request body is not valid UTF-8.');
  }
  const value = parseJsonBody(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidBodyError('The request body must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [mediaType = '', ...parameters] = header.split(';').map((part) => part.trim());
  if (!JSON_MEDIA_TYPE.test(mediaType.toLowerCase())) return false;
  return parameters.every((parameter) => {
    const [name = '', value = ''] = parameter.split('=').map((part) => part.trim().toLowerCase());
    return name !== 'charset' || value.replace(/"/g, '') === 'utf-8';
  });
}

/** Validates input against a schema; every problem is reported, each naming its field. */
export function parseInput<const TSchema extends v.GenericSchema>(schema: TSchema, input: unknown): v.InferOutput<TSchema> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw new InvalidParameterError(`${result.issues.map(describeIssue).join('; ')}.`);
}

function describeIssue(issue: v.BaseIssue<unknown>): string {
  const path = v.getDotPath(issue);
  return path ? `${path} ${issue.message}` : issue.message;
}

/** The `Idempotency-Key` header; undefined when absent, 400 when present but not a usable key. */
export function readIdempotencyKey(event: APIGatewayProxyEventV2): string | undefined {
  const key = event.headers[IDEMPOTENCY_KEY_HEADER];
  if (key === undefined || v.is(IdempotencyKeySchema, key)) return key;
  throw new InvalidParameterError(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters.`);
}

/** The query string as API Gateway hands it over: repeated names arrive joined by commas. */
export function queryParameters(event: APIGatewayProxyEventV2): Record<string, string> {
  return { ...event.queryStringParameters } as Record<string, string>;
}

/** The absolute URL of a path under the API, as the client reached it (scheme and host included). */
export function apiUrl(event: APIGatewayProxyEventV2, path: string, query?: URLSearchParams): string {
  const scheme = event.headers['x-forwarded-proto'] ?? 'https';
  const host = event.headers.host ?? event.requestContext.domainName;
  const search = query && query.size > 0 ? `?${query.toString()}` : '';
  return `${scheme}://${host}${path}${search}`;
}
