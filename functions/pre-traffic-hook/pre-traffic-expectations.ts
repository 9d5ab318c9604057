import type { AuthorizerContext } from '../../shared/domain/auth/authorizer-context';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { BASE_PATH, findRoute, isOperationId, routeTarget, type OperationId } from '../../shared/facts/routes';
import type { Expectation, RequestParts } from '../../shared/checks/check-requests';
import { authorizerEvent, routeEvent, type RouteRequest } from '../../shared/checks/direct-events';
import { OPERATION_CHECKS } from '../../shared/checks/operation-checks';
import { unhandled } from '../../shared/runtime/unhandled';

/**
 * What the pre-traffic hook asks each function's new version before it takes traffic, and what it must
 * answer: an operation's, as its file of shared/operations/ states them (shared/checks/operation-checks.ts),
 * after the refusal of an anonymous caller every route owes. No check writes; only the authorizer's need keys the keys table holds, which the hook issues for
 * their run and revokes after (check-keys.ts), so they run against the real tables and keep no secret.
 */

export interface Check {
  /** What it shows, as a sentence: it names the check in the log and in its verdict. */
  readonly name: string;
  /** The payload the function is invoked with. */
  readonly event: unknown;
  readonly expect: Expectation;
}

/** The caller the checks act as once authenticated: its key id marks every log line they cause. */
export const CHECK_KEY_ID = 'pre-traffic-check';

export interface CheckContext {
  /** Prefix of each check's request id, which the function logs: ties its log lines to the deployment. */
  readonly runId: string;
  /** A well-formed API key that no table holds: freshly generated, so nobody can have issued it. */
  readonly unknownApiKey: string;
  /** A pet id drawn as pet ids are, so no pet has it but by a 2^-53 chance per pet. */
  readonly unknownPetId: number;
  readonly now: Date;
  /** Keys the keys table holds for this run only, one of each shape: the checks of CHECKED_WITH_A_KEY need them. */
  readonly checkKeys?: CheckKeys;
}

/** A key issued for one run of the checks, revoked when they end. */
export interface CheckKey {
  readonly apiKey: string;
  /** Its public id, which the authorizer must name when it accepts the key. */
  readonly keyId: string;
}

/**
 * Every shape of record the keys table holds (shared/domain/auth/api-key-store.ts), in the order the hook
 * issues them: a key with an expiry (only check keys have one), a revoked key (`revokedAt` set, no expiry,
 * as a client's revoked key is), and a key without an expiry (every client's), last, since it is the one
 * that would not stop working by itself (check-keys.ts). An authorizer that mishandles one shape refuses,
 * or lets in, every key of it while passing the checks of the others.
 */
export const CHECK_KEY_SHAPES = ['withExpiry', 'revoked', 'withoutExpiry'] as const;
export type CheckKeyShape = (typeof CHECK_KEY_SHAPES)[number];
export type CheckKeys = Readonly<Record<CheckKeyShape, CheckKey>>;

/** Whether a key of this shape works once written, so that the hook must revoke it: a revoked one never does. */
export function needsRevoking(shape: CheckKeyShape): boolean {
  return shape !== 'revoked';
}

/** The functions whose checks need keys the keys table holds: an authorizer refusing every key would pass the others. */
export const CHECKED_WITH_A_KEY: ReadonlySet<ApiFunctionName> = new Set<ApiFunctionName>(['authorizer']);

const AUTHENTICATED: AuthorizerContext = { outcome: 'allowed', keyId: CHECK_KEY_ID };

/**
 * The checks of one function, in the order they run. The authorizer's need `checkKeys`: without them
 * only keylessChecksFor can run.
 */
export function checksFor(fn: ApiFunctionName, context: CheckContext): Check[] {
  return checksOf(fn, context, 'all');
}

/**
 * The checks of one function that need no key, the first of checksFor in the same order: what can still
 * be asked when the keys table would not take the check keys.
 */
export function keylessChecksFor(fn: ApiFunctionName, context: CheckContext): Check[] {
  return checksOf(fn, context, 'keyless');
}

function checksOf(fn: ApiFunctionName, context: CheckContext, which: 'all' | 'keyless'): Check[] {
  let sequence = 0;
  const requestId = () => `${context.runId}-${++sequence}`;
  // Every path parameter names a pet no pet has.
  const route = (operationId: OperationId, request: RequestParts & Pick<RouteRequest, 'caller'>) =>
    routeEvent({ ...routeTarget(findRoute(operationId), String(context.unknownPetId)), ...request, requestId: requestId() }, context.now);
  const unmatched = (request: Partial<RouteRequest> = {}) =>
    routeEvent(
      { routeKey: '$default', method: 'GET', rawPath: `${BASE_PATH}/${CHECK_KEY_ID}`, ...request, requestId: requestId() },
      context.now,
    );
  const anonymous = (event: unknown): Check => ({
    name: 'refuses a request that no authorizer let through with our 401',
    event,
    expect: { kind: 'error', code: 'unauthorized' },
  });

  if (isOperationId(fn)) {
    const { check } = OPERATION_CHECKS[fn];
    return [
      anonymous(route(fn, check.request)),
      { name: check.name, event: route(fn, { ...check.request, caller: AUTHENTICATED }), expect: check.expect },
    ];
  }
  switch (fn) {
    case 'routeNotFound':
      return [
        anonymous(unmatched()),
        {
          name: 'answers 404 for a path no route serves',
          event: unmatched({ caller: AUTHENTICATED }),
          expect: { kind: 'error', code: 'not_found' },
        },
      ];
    case 'authorizer': {
      const keyless: Check[] = [
        {
          // `invalid` for a well-formed key only comes after the keys table answered: a broken
          // lookup would be `unavailable`.
          name: 'refuses a key the keys table does not hold, after looking it up',
          event: authorizerEvent(`Bearer ${context.unknownApiKey}`, requestId(), context.now),
          expect: { kind: 'verdict', outcome: 'invalid' },
        },
        {
          name: 'refuses a request without a key',
          event: authorizerEvent(undefined, requestId(), context.now),
          expect: { kind: 'verdict', outcome: 'missing' },
        },
      ];
      if (which === 'keyless') return keyless;
      const { checkKeys } = context;
      if (checkKeys === undefined) throw new Error('The authorizer is checked with keys the keys table holds: issue them first.');
      const bearer = (key: CheckKey) => authorizerEvent(`Bearer ${key.apiKey}`, requestId(), context.now);
      return [
        ...keyless,
        {
          name: 'accepts a key with an expiry the keys table holds, as that key',
          event: bearer(checkKeys.withExpiry),
          expect: { kind: 'verdict', outcome: 'allowed', keyId: checkKeys.withExpiry.keyId },
        },
        {
          // Its record has no `expiresAt`, as every client's key: a lookup that needs one refuses them all.
          name: 'accepts a key without an expiry the keys table holds, as that key',
          event: bearer(checkKeys.withoutExpiry),
          expect: { kind: 'verdict', outcome: 'allowed', keyId: checkKeys.withoutExpiry.keyId },
        },
        {
          name: 'refuses a revoked key the keys table holds',
          event: bearer(checkKeys.revoked),
          expect: { kind: 'verdict', outcome: 'invalid' },
        },
      ];
    }
    default:
      return unhandled(fn);
  }
}
