import { authorizerEvent, httpEvent, type HttpEventOptions } from '../lambda/events';
import type { AuthorizerContext } from '../../shared/domain/auth/authorizer-context';
import type { RequestParts } from '../../shared/checks/check-requests';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { findRoute, isOperationId, OPERATION_IDS, pathParameterNames, routeTarget, type OperationId } from '../../shared/facts/routes';
import { OPERATIONS } from '../../shared/operations/operations';
import { unhandled } from '../../shared/runtime/unhandled';

/** The request each function serves in the benchmark: the common case of its route. */
export interface BenchRequests {
  /** A stored, unrevoked key, for the authorizer. */
  readonly apiKey: string;
}

/** Ids of the pets iterations name, far above the seeded ones (tools/bench/seed.ts counts those up from 1). */
const ITERATION_PET_IDS_FROM = 1_000_000_000_000;

/**
 * The pet an iteration's request names, its own, so a request that consumes its pet (a delete) leaves every other
 * request its pet: stored before the run (tools/bench/seed.ts, storeIterationPets) when the request names one.
 */
export function iterationPetId(index: number): number {
  return ITERATION_PET_IDS_FROM + index;
}

/** Whether a function's bench request names a pet: its route has a path parameter. */
export function namesPet(name: ApiFunctionName): boolean {
  return isOperationId(name) && pathParameterNames(findRoute(name).path).length > 0;
}

/** An operation's request as API Gateway hands it to the function behind the authorizer: `parts` sent, each path parameter naming `petId`. */
export function operationEvent(operationId: OperationId, parts: RequestParts & Pick<HttpEventOptions, 'authorizer'>, petId: number) {
  const route = findRoute(operationId);
  return httpEvent({ ...routeTarget(route, String(petId)), ...parts });
}

/**
 * An operation's bench request (its file of shared/operations/), with more headers or query parameters, another body,
 * or another verdict of the authorizer.
 */
export function operationBenchEvent(
  operationId: OperationId,
  petId: number,
  extra: {
    readonly headers?: Record<string, string>;
    readonly query?: Record<string, string>;
    readonly body?: string;
    readonly authorizer?: AuthorizerContext;
  } = {},
) {
  const { request } = OPERATIONS[operationId].bench;
  return operationEvent(
    operationId,
    {
      ...request,
      headers: { ...request.headers, ...extra.headers },
      query: { ...request.query, ...extra.query },
      ...(extra.body === undefined ? {} : { body: extra.body }),
      ...(extra.authorizer === undefined ? {} : { authorizer: extra.authorizer }),
    },
    petId,
  );
}

/** A request no route matches, which API Gateway's `$default` route hands routeNotFound. */
export function unmatchedEvent() {
  return httpEvent({ routeKey: '$default', rawPath: '/v1/nowhere' });
}

export function keyEvent(apiKey: string) {
  return authorizerEvent(`Bearer ${apiKey}`);
}

/**
 * The request each function serves at an iteration of the bench, by an index no other request shares
 * (BenchSetup.iterationsFor). Each function serves the common case of its route: an operation's is the bench request its
 * file of shared/operations/ states, every path parameter naming the iteration's own pet.
 */
const BENCH_EVENTS: Readonly<Record<ApiFunctionName, (requests: BenchRequests, index: number) => unknown>> = {
  ...(Object.fromEntries(
    OPERATION_IDS.map((operationId) => [
      operationId,
      (_: BenchRequests, index: number) => operationBenchEvent(operationId, iterationPetId(index)),
    ]),
  ) as Record<OperationId, (requests: BenchRequests, index: number) => unknown>),
  routeNotFound: () => unmatchedEvent(),
  authorizer: (requests) => keyEvent(requests.apiKey),
};

export function benchEvent(name: ApiFunctionName, requests: BenchRequests, index: number): unknown {
  return BENCH_EVENTS[name](requests, index);
}

/** A function's events at the given iterations, as the runners take them in turn: one when they are all alike. */
export function benchEvents(name: ApiFunctionName, requests: BenchRequests, indices: readonly number[]): unknown[] {
  return inTurn(indices.map((index) => benchEvent(name, requests, index)));
}

/** Events to hand in turn, one per iteration; a single one when they are all alike, so a runner repeats it as it always did. */
export function inTurn(events: readonly unknown[]): unknown[] {
  const first = JSON.stringify(events[0]);
  return events.every((event) => JSON.stringify(event) === first) ? events.slice(0, 1) : [...events];
}

/** What a function answers when it served its bench request as intended (anything else is a bench bug). */
export function expectedOutcome(name: ApiFunctionName): number | string {
  // An operation is measured on its success path.
  if (isOperationId(name)) return findRoute(name).successStatus;
  switch (name) {
    case 'routeNotFound':
      return 404;
    case 'authorizer':
      return 'allowed';
    default:
      return unhandled(name);
  }
}

/** A check of each result: throws unless the function answered `expected`, naming it by `label`. */
export function expectOutcome(label: string, expected: number | string): (result: unknown) => void {
  return (result) => {
    if (outcomeOf(result) !== expected) throw new Error(`${label} answered ${JSON.stringify(result)}, not ${expected}`);
  };
}

/** How a function answered: an HTTP function's status code, the authorizer's verdict. */
export function outcomeOf(result: any): number | string | undefined {
  return result?.statusCode ?? result?.context?.outcome;
}
