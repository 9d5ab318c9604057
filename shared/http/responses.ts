import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from '../domain/idempotency/idempotency-errors';
import { InvalidCursorError, PetNotFoundError } from '../domain/pets/pet-errors';
import { StoreUnavailableError } from '../domain/store-errors';
import { ApiError, InternalError, NotFoundError, ServiceUnavailableError } from './errors';

export type HttpResponse = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
};

/** The one place a response with a body is written: JSON body, status, lower-case header names. */
export function jsonResponse(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...lowerCaseKeys(headers) },
    body: JSON.stringify(body),
  };
}

export function ok(body: unknown, headers?: Record<string, string>): HttpResponse {
  return jsonResponse(200, body, headers);
}

export function created(body: unknown, headers?: Record<string, string>): HttpResponse {
  return jsonResponse(201, body, headers);
}

/** A 204: no body, so no content-type either (RFC 9110 forbids content in it). */
export function noContent(headers: Record<string, string> = {}): HttpResponse {
  return { statusCode: 204, headers: lowerCaseKeys(headers) };
}

/**
 * Maps anything thrown to a client-safe error: ApiErrors as they are, the domain's errors to theirs,
 * outages to 503, the rest to 500.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreUnavailableError) return new ServiceUnavailableError();
  if (error instanceof PetNotFoundError) return new NotFoundError(`No pet has id ${error.petId}.`);
  if (error instanceof InvalidCursorError) {
    return new ApiError('invalid_cursor', 'The cursor is invalid or belongs to a different listing; start again without it.');
  }
  if (error instanceof IdempotencyKeyInUseError) {
    return new ApiError(
      'idempotency_key_in_use',
      'A request with this Idempotency-Key is still in progress; retry shortly to get its answer.',
      {
        'retry-after': '1',
      },
    );
  }
  if (error instanceof IdempotencyKeyReusedError) {
    return new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request body; use a new key for each new pet.',
    );
  }
  return new InternalError();
}

export function errorResponse(error: ApiError): HttpResponse {
  return jsonResponse(error.status, { code: error.code, message: error.message, status: error.status }, { ...error.headers });
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
