import { authorizerEvent, httpEvent } from '../lambda/events';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** The request each function serves in the benchmark: the common case of its route. */
export interface BenchRequests {
  /** A pet that exists, for getPet. */
  readonly petId: number;
  /** A stored, unrevoked key, for the authorizer. */
  readonly apiKey: string;
}

export function listEvent(query: Record<string, string> = {}) {
  return httpEvent({ routeKey: 'GET /v1/pets', rawPath: '/v1/pets', query });
}

export function createEvent(headers: Record<string, string> = {}) {
  return httpEvent({
    method: 'POST',
    routeKey: 'POST /v1/pets',
    rawPath: '/v1/pets',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ name: 'Bench pet', categoryId: 3, status: 'available' }),
  });
}

export function getEvent(petId: number) {
  return httpEvent({ routeKey: 'GET /v1/pets/{petId}', rawPath: `/v1/pets/${petId}`, pathParameters: { petId: String(petId) } });
}

export function keyEvent(apiKey: string) {
  return authorizerEvent(`Bearer ${apiKey}`);
}

/**
 * The request each function serves at an iteration of the bench, by an index no other request shares
 * (BenchSetup.iterations). Each function here repeats the common case of its route; an operation that succeeds once
 * per resource (a delete) takes the index's own resource, so it is measured on its success path, not on the 404 a
 * second request would get.
 */
const BENCH_EVENTS: Readonly<Record<ApiFunctionName, (requests: BenchRequests, index: number) => unknown>> = {
  listPets: () => listEvent(),
  createPet: () => createEvent(),
  getPet: (requests) => getEvent(requests.petId),
  routeNotFound: () => httpEvent({ routeKey: '$default', rawPath: '/v1/nowhere' }),
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
  const outcomes: Record<ApiFunctionName, number | string> = {
    listPets: 200,
    createPet: 201,
    getPet: 200,
    routeNotFound: 404,
    authorizer: 'allowed',
  };
  return outcomes[name];
}

/** How a function answered: an HTTP function's status code, the authorizer's verdict. */
export function outcomeOf(result: any): number | string | undefined {
  return result?.statusCode ?? result?.context?.outcome;
}
