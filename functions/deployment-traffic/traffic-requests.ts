import { authorizerEvent, routeEvent } from '../../shared/checks/direct-events';
import type { AuthorizerContext } from '../../shared/domain/auth/authorizer-context';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { BASE_PATH, findRoute, routeKey, type OperationId } from '../../shared/facts/routes';
import { unhandled } from '../../shared/runtime/unhandled';

/**
 * The deployment's own requests to a function, while its new version is judged: reads, and creates refused
 * before anything is stored, so no client ever sees what they did. They reach the `live` alias as a
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
  const route = (operationId: OperationId, request: { query?: Record<string, string>; body?: string; petId?: string } = {}) => {
    const target = findRoute(operationId);
    return routeEvent(
      {
        routeKey: routeKey(target),
        method: target.method,
        rawPath: BASE_PATH + target.path.replace('{petId}', encodeURIComponent(request.petId ?? '')),
        ...(request.petId === undefined ? {} : { pathParameters: { petId: request.petId } }),
        ...(request.query === undefined ? {} : { query: request.query }),
        ...(request.body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: request.body }),
        caller: AUTHENTICATED,
        requestId,
      },
      context.now,
    );
  };
  switch (fn) {
    case 'listPets':
      return route('listPets', { query: index % 2 === 0 ? { limit: '1' } : PET_IDS_LISTING });
    case 'getPet': {
      const { petIds } = context;
      return route('getPet', { petId: String(petIds.length === 0 ? context.unknownPetId : petIds[index % petIds.length]) });
    }
    case 'createPet':
      // No required field and no Idempotency-Key: refused before any write, a record included.
      return route('createPet', { body: '{}' });
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
