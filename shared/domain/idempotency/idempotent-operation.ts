import { hash } from 'node:crypto';
import type { InvocationClock } from '../../runtime/deadline';
import { IdempotencyKeyInUseError, IdempotencyKeyReusedError } from './idempotency-errors';
import type { IdempotencyScope } from './idempotency-key';
import { isLive, type IdempotencyStore } from './idempotency-store';

/**
 * How long a key is honoured, as Stripe and the IETF httpapi draft's examples do; afterwards the pet
 * itself still settles a retry (docs/idempotency.md).
 */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;

/** An operation's answer, and whether it is the stored answer of an earlier request. */
export type Outcome<TResult> = TResult & { readonly replayed: boolean };

/**
 * Claims in a row that may find the key's record gone or void by the time it is read (its request
 * failed and released it, or it expired); then another request is racing for the key.
 */
const MAX_CLAIMS = 3;

/**
 * Makes an operation idempotent per Idempotency-Key, scoped to the API key (docs/idempotency.md). An
 * operation that throws records nothing, so its retry runs again: only validated input may reach here,
 * and a 5xx must be thrown, not returned.
 */
export function makeIdempotentOperation<TInput, TResult extends Record<string, unknown>>(options: {
  /** Prefix of the record ids: the operation's name, stable across deploys. */
  readonly name: string;
  readonly store: IdempotencyStore;
  /** `requestToken` is the same for every attempt and retry of a keyed request; undefined without a key. */
  readonly operation: (input: TInput, requestToken: string | undefined) => Promise<Outcome<TResult>>;
}): (input: TInput, scope: IdempotencyScope | undefined, clock: InvocationClock) => Promise<Outcome<TResult>> {
  const { name, store, operation } = options;

  return async (input, scope, clock) => {
    if (scope === undefined) return operation(input, undefined);
    const { id, requestToken } = scopeIdentity(name, scope);
    const validation = hashJson(input);

    for (let claims = 1; ; claims++) {
      const now = Date.now();
      const claim = await store.claim(
        {
          id,
          status: 'INPROGRESS',
          expiration: Math.round(now / 1000 + IDEMPOTENCY_TTL_SECONDS),
          inProgressExpiration: now + clock.getRemainingTimeInMillis(),
          validation,
        },
        now,
      );
      if (claim.outcome === 'claimed') break;
      if (claim.outcome === 'held' && isLive(claim.record, Date.now())) {
        const held = claim.record;
        if (held.validation !== validation) throw new IdempotencyKeyReusedError();
        if (held.status === 'INPROGRESS') throw new IdempotencyKeyInUseError();
        return { ...(held.data as TResult), replayed: true };
      }
      if (claims === MAX_CLAIMS) throw new IdempotencyKeyInUseError();
    }

    let result: Outcome<TResult>;
    try {
      result = await operation(input, requestToken);
    } catch (error) {
      // Best effort: a claim that cannot be released holds its key until its request's deadline,
      // no longer (inProgressExpiration); the operation's error is the answer either way.
      await store.release(id).catch(() => undefined);
      throw error;
    }
    await store.complete({
      id,
      status: 'COMPLETED',
      expiration: Math.round(Date.now() / 1000 + IDEMPOTENCY_TTL_SECONDS),
      validation,
      data: result,
    });
    return result;
  };
}

/**
 * A keyed request's record id and token, from its scope alone so every attempt agrees; hashed so
 * neither key is stored in the clear. Both are stored, so neither derivation may change.
 */
function scopeIdentity(name: string, scope: IdempotencyScope): { readonly id: string; readonly requestToken: string } {
  return {
    id: `${name}#${hashJson({ idempotencyKey: scope.idempotencyKey, keyId: scope.keyId })}`,
    requestToken: hash('sha256', `${scope.keyId}\n${scope.idempotencyKey}`, 'buffer').subarray(0, 16).toString('base64url'),
  };
}

/**
 * SHA-256 (base64) of a value's JSON with object keys sorted, so that the same body with its fields
 * in another order is the same request.
 */
function hashJson(value: unknown): string {
  return hash('sha256', JSON.stringify(sortKeys(value)), 'base64');
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}
