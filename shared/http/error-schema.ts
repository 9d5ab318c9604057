import * as v from 'valibot';
import { ERROR_CODES, type ErrorCode } from '../facts/error-codes';

/**
 * The body of every error response, for the OpenAPI document and the checks. Apart from errors.ts so no
 * function builds it at load: no function parses an error body.
 */
export const ErrorSchema = v.pipe(
  v.object({
    code: v.pipe(
      v.picklist(Object.keys(ERROR_CODES) as ErrorCode[]),
      v.description('Machine-readable error code; stable, meant for programs.'),
    ),
    message: v.pipe(v.string(), v.description('Human-readable description; may change, meant for people.')),
    status: v.pipe(
      v.number(),
      v.integer(),
      v.minValue(400),
      v.maxValue(599),
      v.metadata({ format: 'int32' }),
      v.description('The HTTP status code of the response.'),
    ),
  }),
  v.description('Every error response has this body.'),
);
