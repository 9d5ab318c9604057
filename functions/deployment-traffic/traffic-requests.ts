import { authorizerEvent, routeEvent } from '../../shared/checks/direct-events';
import type { AuthorizerContext } from '../../shared/domain/auth/authorizer-context';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { BASE_PATH, findRoute, isOperationId, routeTarget } from '../../shared/facts/routes';
import { OPERATION_CHECKS } from '../../shared/checks/operation-checks';
import { unhandled } from '../../shared/runtime/unhandled';

/**
 * The deployment's own requests to a function, while its new version is judged: an operation's as its file
 * of shared/operations/ states them (shared/checks/operation-checks.ts), none of which writes, so no client
 * ever sees what they did. They reach the `live` alias as a
 * client's do, so the old and new versions share them in the canary's proportion and each version's rates
 * are over the same mix.
 */

/** The caller the route requests act as: the authorizer's verdict for a key of that id, which every route log line carries. */
export const TRAFFIC_KEY_ID = 'deployment-traffic';

const AUTHENTICATED: AuthorizerContext = { outcome: 'allowed', keyId: TRAFFIC_KEY_ID };

export interface TrafficContext {
  /** Prefix of each request's id: ties the function's log lines to the deployment. */
  readonly runId: string;
  /** A well-formed API key no table holds: the authorizer refuses it only after looking it up. */
  readonly unknownApiKey: string;
  /** Pets to read, newest first, so a version that cannot find stored pets answers 404 where the old one answers 200; none on an empty stage. */
  readonly petIds: readonly number[];
  /** A pet id no pet has, read when the stage holds none. */
  readonly unknownPetId: number;
  readonly now: Date;
}

/** The listing getPet's traffic reads its pets from: one page of the newest. */
export const PET_IDS_LISTING = { limit: '20' } as const;

/** The `index`-th request of the deployment's traffic to `fn`, the requests taking turns. */
export function trafficRequest(fn: ApiFunctionName, index: number, context: TrafficContext): unknown {
  const requestId = `${context.runId}-${index}`;
  if (isOperationId(fn)) {
    const { traffic } = OPERATION_CHECKS[fn];
    const request = traffic[index % traffic.length]!;
    // Every path parameter names one of the newest stored pets, in turn; a pet no pet has on an empty stage.
    const { petIds } = context;
    const petId = String(petIds.length === 0 ? context.unknownPetId : petIds[index % petIds.length]);
    return routeEvent(
      {
        ...routeTarget(findRoute(fn), petId),
        ...request,
        caller: AUTHENTICATED,
        requestId,
      },
      context.now,
    );
  }
  switch (fn) {
    case 'routeNotFound':
      return routeEvent(
        { routeKey: '$default', method: 'GET', rawPath: `${BASE_PATH}/${TRAFFIC_KEY_ID}`, caller: AUTHENTICATED, requestId },
        context.now,
      );
    case 'authorizer':
      return authorizerEvent(index % 2 === 0 ? `Bearer ${context.unknownApiKey}` : undefined, requestId, context.now);
    default:
      return unhandled(fn);
  }
}
