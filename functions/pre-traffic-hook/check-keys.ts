import type { ApiKeyRecord, ApiKeyStore } from '../../shared/domain/auth/api-key-store';
import { generateApiKey, generateKeyId, hashApiKey } from '../../shared/domain/auth/api-keys';
import { StoreUnavailableError } from '../../shared/domain/store-errors';
import type { InvocationClock } from '../../shared/runtime/deadline';
import { logger } from '../../shared/runtime/logger';
import { CHECK_KEY_SHAPES, needsRevoking, type CheckKeys, type CheckKeyShape } from './pre-traffic-expectations';
import type { Verdict } from './verdicts';

/**
 * Where the hook keeps the keys its checks need: the stage's API keys table, through the one store of it
 * (shared/dynamodb/dynamo-api-key-store.ts), so the authorizer reads the records as any client's. Each call
 * ends by itself within CHECK_KEY_CALL_LIMIT_MS.
 */
export type CheckKeyStore = Pick<ApiKeyStore, 'add' | 'revokeByHash'>;

/** The name check keys are issued under, which tells them from clients' keys in `npm run keys -- list`. */
export const CHECK_KEY_NAME = 'pre-traffic-check';

/** What a run of the checks does with the keys: all of its checks once every key is stored, else those that need none. */
export interface KeyedRun {
  readonly keyless: () => Promise<Verdict[]>;
  readonly all: (checkKeys: CheckKeys) => Promise<Verdict[]>;
}

/** One key of one shape for one run: the key itself, which is never logged, and its record. */
interface IssuedKey {
  readonly shape: CheckKeyShape;
  readonly apiKey: string;
  readonly record: ApiKeyRecord;
}

const ISSUES = 'issues its check keys';
const REVOKES = 'revokes its check key';

/**
 * Runs the checks with one key of each shape (CHECK_KEY_SHAPES) issued for them alone, and revokes the keys
 * afterwards whatever happened, an issue that seemed to fail included. The keys themselves are never
 * logged; their ids are, before they are written.
 *
 * Why none outlives the hook:
 * - the key with an expiry stops working by itself when the hook's invocation ends;
 * - the revoked key is written revoked, so it never works at all and needs no revoking;
 * - the key without an expiry (the shape of every client's key) would work until revoked, so it is
 *   written last, only once the keys table has taken the others, and revoked first. If its revocation
 *   fails, it could outlive the hook: the run fails, loudly, naming it, as for any revocation that fails.
 *   Its key was only ever in this invocation's memory and in the events it sent the authorizer, so
 *   nobody holds it, but an operator revokes it all the same (`npm run keys -- revoke`).
 *
 * When the keys table is unavailable (throttling, slow or unreachable: StoreUnavailableError), the checks
 * that need a key cannot run on any version, and no version is at fault: that is excused, like a check that
 * fails the same way on the old version, and logged as an ERROR; the checks that need no key still run. A
 * table that refuses the hook otherwise (access denied, no such table) still fails the run: that is the
 * hook's own setup, which would otherwise leave every authorizer deploy unchecked with keys, silently.
 */
export async function withCheckKeys(store: CheckKeyStore | undefined, clock: InvocationClock, run: KeyedRun): Promise<Verdict[]> {
  if (store === undefined) return [failed(ISSUES, 'the hook was given no keys table to issue them in')];
  const now = Date.now();
  const keys = CHECK_KEY_SHAPES.map((shape) => newCheckKey(shape, now, now + clock.getRemainingTimeInMillis()));
  /** Each key whose write was sent, and whether that write seemed to fail. */
  const written: Array<{ key: IssuedKey; writeFailed: boolean }> = [];

  let verdicts: Verdict[] = [];
  try {
    let refusal: unknown;
    for (const key of keys) {
      const { keyId, expiresAt, revokedAt } = key.record;
      logger.info('Issuing a check key', { keyId, shape: key.shape, expiresAt: expiresAt ?? 'never', ...(revokedAt ? { revokedAt } : {}) });
      refusal = await issue(store, key.record);
      written.push({ key, writeFailed: refusal !== undefined });
      if (refusal !== undefined) break;
    }
    if (refusal === undefined) {
      const checkKeys = Object.fromEntries(keys.map(({ shape, apiKey, record }) => [shape, { apiKey, keyId: record.keyId }]));
      verdicts = await run.all(checkKeys as CheckKeys);
    } else {
      verdicts = await run.keyless();
      verdicts = [...verdicts, notIssued(refusal)];
    }
  } finally {
    // Latest first: the key without an expiry, the one that would not stop by itself, is revoked before the others.
    for (const { key, writeFailed } of written.reverse()) {
      if (needsRevoking(key.shape)) verdicts = [...verdicts, await revoke(store, key.record, writeFailed)];
    }
  }
  return verdicts;
}

/** A new key of one shape, expiring at `endsAt` (when the hook's invocation ends) if its shape has an expiry. */
function newCheckKey(shape: CheckKeyShape, now: number, endsAt: number): IssuedKey {
  const apiKey = generateApiKey();
  const createdAt = new Date(now).toISOString();
  const record: ApiKeyRecord = {
    keyId: generateKeyId(),
    keyHash: hashApiKey(apiKey),
    name: CHECK_KEY_NAME,
    createdAt,
    ...(shape === 'withExpiry' ? { expiresAt: new Date(endsAt).toISOString() } : {}),
    ...(shape === 'revoked' ? { revokedAt: createdAt } : {}),
  };
  return { shape, apiKey, record };
}

/** Stores a check key's record; what refused it, or undefined once it is stored. */
async function issue(store: CheckKeyStore, record: ApiKeyRecord): Promise<unknown> {
  try {
    await store.add(record);
    return undefined;
  } catch (error) {
    // Refused as its own earlier write, the key was issued all the same: only the answer was lost.
    return isOwnEarlierWrite(error) ? undefined : error;
  }
}

/**
 * The SDK retried a put whose answer was lost, and the retry met the first attempt's record: no other
 * record can hold a hash of 256 random bits, so a refused put of a fresh key is its own earlier write.
 */
function isOwnEarlierWrite(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

/** The verdict on keys the table would not take: excused when it is unavailable, failed when it refused the hook. */
function notIssued(error: unknown): Verdict {
  if (error instanceof StoreUnavailableError) {
    const detail = `the keys table is unavailable, so the checks that need a key ran on no version: ${describeError(error)}`;
    logger.error('The checks that need a key did not run', { check: ISSUES, detail });
    return { check: ISSUES, passed: true, excused: true, detail };
  }
  return failed(ISSUES, `the keys table refused them: ${describeError(error)}`);
}

function failed(check: string, detail: string): Verdict {
  logger.error('Check failed', { check, detail });
  return { check, passed: false, detail };
}

/**
 * Revokes one check key, and says whether that leaves no working key behind; a key that was never stored
 * needs no revoking. One that cannot be revoked fails the run, unless its own write seemed to fail and it
 * has an expiry: whether or not that write landed, it stops working when the hook's invocation ends, and
 * no key without an expiry was written after it (withCheckKeys).
 */
async function revoke(store: CheckKeyStore, record: ApiKeyRecord, writeFailed: boolean): Promise<Verdict> {
  const { keyId, expiresAt } = record;
  try {
    const revoked = await store.revokeByHash(record.keyHash, new Date());
    const detail = revoked ? `revoked ${keyId}` : `${keyId} was never stored`;
    logger.info('Check passed', { check: REVOKES, detail });
    return { check: REVOKES, passed: true, detail };
  } catch (error) {
    if (expiresAt !== undefined && writeFailed) {
      const detail = `${keyId} could not be revoked, nor was its write taken; had it landed, the key stops working at ${expiresAt}: ${describeError(error)}`;
      logger.warn('Check key left to expire by itself', { check: REVOKES, detail });
      return { check: REVOKES, passed: true, detail };
    }
    return failed(
      REVOKES,
      expiresAt === undefined
        ? `${keyId} has no expiry and may still work: revoke it now with npm run keys -- revoke ${keyId} --stage <stage>: ${describeError(error)}`
        : `${keyId} is still active until it expires at ${expiresAt}, or revoke it with npm run keys -- revoke ${keyId} --stage <stage>: ${describeError(error)}`,
    );
  }
}

/** An error and what caused it, as StoreUnavailableError wraps the SDK's. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const own = `${error.name}: ${error.message}`;
  return error.cause instanceof Error ? `${own} (${describeError(error.cause)})` : own;
}
