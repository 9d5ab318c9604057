import { authorizerEvent } from '../lambda/events';
import type { ApiFunctionName, RouteFunctionName } from '../../shared/facts/function-names';
import { iterationPetId, keyEvent, operationBenchEvent, unmatchedEvent } from './bench-events';

// Every answer besides the successes that `npm run bench` measures against a floor: each class is stated once here,
// and its events, its measurements, its verdicts, its bill row and its report line all derive from this table.

/** One function's part in answering a class's request: the event it is handed at an iteration, and what it answers. */
export interface AnswerStep {
  readonly name: ApiFunctionName;
  /** The event of the iteration `index` (tools/bench/bench-events.ts): a new one only where the function keeps state. */
  readonly event: (index: number) => unknown;
  /** The route's status, or the authorizer's verdict. */
  readonly outcome: number | string;
}

/** How a class's request meets DynamoDB: not at all, reading a table (its capacity is measured), or a store it cannot reach. */
export type StoreUse = 'untouched' | 'read' | 'unreachable';

export interface AnswerClass {
  readonly id: string;
  readonly status: 400 | 401 | 404 | 503;
  /** The request, in a few words, for the report and docs/performance.md. */
  readonly request: string;
  /** The least the design must do for this answer: what the floors of its functions do (tools/bench/floors/). */
  readonly floor: string;
  /**
   * The functions that answer it, in order: the authorizer when its verdict is the class's, then the route function.
   * Without the authorizer among them, the request had a key the authorizer holds in its cache.
   */
  readonly steps: readonly AnswerStep[];
  readonly store: StoreUse;
  /** The most log bytes one such request may cost (tools/bench/bill.ts): its functions' lines and the access log's. */
  readonly maxLogBytes: number;
}

/** A pet id no request stores: far above the seeded pets and the iterations' own (tools/bench/bench-events.ts). */
const MISSING_PET_ID = 9_000_000_000_000;

/** A well-formed key no one was issued: a different one at every iteration, so the authorizer's cache never answers it. */
export function unknownKey(index: number): string {
  return `pets_${String(index).padStart(43, '0')}`;
}

/** The route a refused request is counted on: every route refuses alike, and the bill prices it on listPets. */
const REFUSING_ROUTE = 'listPets';

const CLASSES = [
  {
    id: 'createPet, invalid body',
    status: 400,
    request: 'POST /pets with a body that has no `name`',
    floor: 'the body parsed, one field checked, the 400 Error body',
    steps: [
      {
        name: 'createPet',
        event: () => operationBenchEvent('createPet', 0, { body: JSON.stringify({ categoryId: 3, status: 'available' }) }),
        outcome: 400,
      },
    ],
    store: 'untouched',
    // Its Answers metric line, which a deployment judges each version's answers by (infra/version-alarms.ts).
    maxLogBytes: 1_000,
  },
  {
    id: 'listPets, invalid limit',
    status: 400,
    request: 'GET /pets?limit=0',
    floor: '`limit` checked, the 400 Error body',
    steps: [{ name: 'listPets', event: () => operationBenchEvent('listPets', 0, { query: { limit: '0' } }), outcome: 400 }],
    store: 'untouched',
    // Its Answers metric line, which a deployment judges each version's answers by (infra/version-alarms.ts).
    maxLogBytes: 1_000,
  },
  {
    id: 'anonymous',
    status: 401,
    request: 'GET /pets without `Authorization`',
    floor: 'the authorizer answers `missing` without a lookup; the route, the 401 Error body',
    steps: [
      { name: 'authorizer', event: () => authorizerEvent(), outcome: 'missing' },
      { name: REFUSING_ROUTE, event: () => operationBenchEvent(REFUSING_ROUTE, 0, { authorizer: { outcome: 'missing' } }), outcome: 401 },
    ],
    store: 'untouched',
    maxLogBytes: 700,
  },
  {
    id: 'unknown key',
    status: 401,
    request: 'GET /pets with a key no one was issued',
    floor: 'the authorizer reads the key with one GetItem that finds nothing; the route, the 401 Error body',
    steps: [
      { name: 'authorizer', event: (index) => keyEvent(unknownKey(index)), outcome: 'invalid' },
      { name: REFUSING_ROUTE, event: () => operationBenchEvent(REFUSING_ROUTE, 0, { authorizer: { outcome: 'invalid' } }), outcome: 401 },
    ],
    store: 'read',
    maxLogBytes: 700,
  },
  {
    id: 'getPet, no such pet',
    status: 404,
    request: 'GET /pets/{petId} of a pet that does not exist',
    floor: 'one GetItem that finds nothing, the 404 Error body',
    steps: [{ name: 'getPet', event: () => operationBenchEvent('getPet', MISSING_PET_ID), outcome: 404 }],
    store: 'read',
    // Its Answers metric line, which a deployment judges each version's answers by (infra/version-alarms.ts).
    maxLogBytes: 1_000,
  },
  {
    id: 'unmatched route',
    status: 404,
    request: 'GET /v1/nowhere (routeNotFound)',
    floor: 'the 404 Error body',
    steps: [{ name: 'routeNotFound', event: () => unmatchedEvent(), outcome: 404 }],
    store: 'untouched',
    maxLogBytes: 700,
  },
  {
    id: 'store unavailable',
    status: 503,
    request: 'GET /pets/{petId} while DynamoDB refuses connections',
    floor: "one GetItem through the design's client (3 attempts, 1 s each) against a closed port, the 503 Error body",
    steps: [{ name: 'getPet', event: () => operationBenchEvent('getPet', iterationPetId(0)), outcome: 503 }],
    store: 'unreachable',
    // The outage's WARN line, its error and causes without stacks, and its Answers metric line.
    maxLogBytes: 2_000,
  },
] as const satisfies readonly AnswerClass[];

export type AnswerClassId = (typeof CLASSES)[number]['id'];

/** Every answer class the bench measures besides the successes, each known by its id. */
export const ANSWER_CLASSES: readonly (AnswerClass & { readonly id: AnswerClassId })[] = CLASSES;

/** A class's line of the bill, its status after its name: `anonymous (401)`. */
export function billRowOf(answerClass: Pick<AnswerClass, 'id' | 'status'>): string {
  return `${answerClass.id} (${answerClass.status})`;
}

/** The function that answers the class's request: its last step. */
export function routeStepOf(answerClass: AnswerClass): AnswerStep & { readonly name: RouteFunctionName } {
  return answerClass.steps.at(-1) as AnswerStep & { readonly name: RouteFunctionName };
}

/** The authorizer's step, when its verdict is the class's. */
export function authorizerStepOf(answerClass: AnswerClass): AnswerStep | undefined {
  return answerClass.steps.find((step) => step.name === 'authorizer');
}

/** Whether any route can give this answer (a refusal by the authorizer), rather than only its route function's. */
export function answeredByEveryRoute(answerClass: AnswerClass): boolean {
  return authorizerStepOf(answerClass) !== undefined;
}

/** A step's name in the report and the results: its function, and which step of its class it is. */
export function stepLabel(answerClass: AnswerClass, step: AnswerStep): string {
  return `${answerClass.id}: ${step.name}`;
}
