import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyInconsistentStateError,
  IdempotencyPersistenceLayerError,
  IdempotencyValidationError,
  makeIdempotent,
} from '@aws-lambda-powertools/idempotency';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { InvocationClock } from '../deadline';
import { isStoreUnavailable } from '../dynamodb';
import { StoreUnavailableError } from '../store-errors';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency-errors';
import type { IdempotencyScope } from './idempotency-key';
import { IDEMPOTENCY_TTL_SECONDS } from './idempotency-table';

/** An operation's answer, and whether it is the stored answer of an earlier request. */
export type Outcome<TResult> = TResult & { readonly replayed: boolean };

/**
 * Makes an operation idempotent per Idempotency-Key with Powertools' idempotency utility:
 * - the first request with a key records "in progress", runs the operation and records its result;
 * - the same key and input within IDEMPOTENCY_TTL_SECONDS returns that result, marked `replayed`;
 * - the same key with another input is IdempotencyKeyReusedError (the input's hash is kept);
 * - the same key while the first is running is IdempotencyKeyInUseError, until it ends or until its
 *   Lambda deadline passes (a crashed request cannot hold its key longer);
 * - an operation that throws records nothing: its retry runs again. That is why only validated
 *   input reaches here (a bad request is not an outcome worth keeping) and why a 5xx is thrown, not
 *   returned.
 * The key is scoped to the API key: the record's id hashes both. Without a key the operation runs
 * as it is.
 */
export function makeIdempotentOperation<TInput, TResult extends Record<string, unknown>>(options: {
  /** Prefix of the record ids: the operation's name, stable across deploys (Powertools defaults to the function name). */
  readonly name: string;
  readonly persistence: BasePersistenceLayer;
  readonly operation: (input: TInput, scope: IdempotencyScope | undefined) => Promise<Outcome<TResult>>;
}): (input: TInput, scope: IdempotencyScope | undefined, clock: InvocationClock) => Promise<Outcome<TResult>> {
  const config = new IdempotencyConfig({
    eventKeyJmesPath: 'scope',
    payloadValidationJmesPath: 'input',
    expiresAfterSeconds: IDEMPOTENCY_TTL_SECONDS,
    hashFunction: 'sha256',
    responseHook: markReplayed,
  });
  // The clock in second position is how Powertools learns the Lambda deadline, which bounds how
  // long an in-progress record can block its key.
  const idempotent = makeIdempotent(
    (request: { scope: IdempotencyScope; input: TInput }, _clock: InvocationClock) => options.operation(request.input, request.scope),
    { persistenceStore: options.persistence, config, keyPrefix: options.name },
  );

  return async (input, scope, clock) => {
    if (scope === undefined) return options.operation(input, undefined);
    try {
      return (await idempotent({ scope, input }, clock)) as Outcome<TResult>;
    } catch (error) {
      throw translateIdempotencyError(error);
    }
  };
}

type ResponseHook = NonNullable<ConstructorParameters<typeof IdempotencyConfig>[0]['responseHook']>;

/** Powertools calls it on the stored result when it answers from the record instead of running the operation. */
const markReplayed: ResponseHook = (response) => ({ ...(response as object), replayed: true }) as ReturnType<ResponseHook>;

/** Powertools' errors in the domain's words; the operation's own errors pass through. */
function translateIdempotencyError(error: unknown): unknown {
  if (error instanceof IdempotencyAlreadyInProgressError) return new IdempotencyKeyInUseError({ cause: error });
  // The record changed under us more often than Powertools retries: another request holds the key.
  if (error instanceof IdempotencyInconsistentStateError) return new IdempotencyKeyInUseError({ cause: error });
  if (error instanceof IdempotencyValidationError) return new IdempotencyKeyReusedError({ cause: error });
  if (error instanceof IdempotencyPersistenceLayerError && isStoreUnavailable(error.cause)) return new StoreUnavailableError(error);
  return error;
}
