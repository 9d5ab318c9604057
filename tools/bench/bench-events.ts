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

/** One typical event per function: what its cold start serves first and its warm runs repeat. */
export function typicalEvent(name: ApiFunctionName, requests: BenchRequests): unknown {
  switch (name) {
    case 'listPets':
      return listEvent();
    case 'createPet':
      return createEvent();
    case 'getPet':
      return getEvent(requests.petId);
    case 'routeNotFound':
      return httpEvent({ routeKey: '$default', rawPath: '/v1/nowhere' });
    case 'authorizer':
      return keyEvent(requests.apiKey);
  }
}

/** What a function answers when it served its typical event as intended (anything else is a bench bug). */
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
