import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import * as v from 'valibot';
import { expect } from 'vitest';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { FUNCTION_CATALOG, schemasOf, type StoreFaultBehaviour } from '../../shared/catalog/function-catalog';
import { ERROR_CODES } from '../../shared/facts/error-codes';
import { findRoute, type OperationId } from '../../shared/facts/routes';
import { unhandled } from '../../shared/runtime/unhandled';
import { expectError, expectRetryAfter } from './http';
import type { Fault, FaultProxy, FaultRule } from './fault-proxy';
import type { TestApi } from './local-api';
import { idempotencyRecords, newPet, storedPets, type PetBody } from './pets';

/**
 * Every operation as the fault suites send it, with what it states of itself under store faults in its
 * file of shared/operations/ (`storeFaults`): the suites iterate these, so a new
 * operation is held to the promises of docs/reliability.md without an edit to them.
 */

/** Where an operation states its behaviour, for the messages that ask for it. */
const WHERE_STATED = 'storeFaults in its file of shared/operations/ (StoreFaultBehaviour)';

/**
 * What an operation states. Its type makes a missing statement a compile error; this names what to add
 * for a run that skipped the type check.
 */
export function statementOf(operationId: OperationId): StoreFaultBehaviour {
  const { storeFaults } = FUNCTION_CATALOG[operationId] as { readonly storeFaults?: StoreFaultBehaviour };
  if (storeFaults === undefined) {
    throw new Error(`${operationId} does not say how it answers a lost answer or a failing store: add ${WHERE_STATED}`);
  }
  return storeFaults;
}

/** The body an operation's statement gives, if its route reads one. */
export function statedBody(operationId: OperationId): Readonly<Record<string, unknown>> | undefined {
  return (statementOf(operationId) as { readonly body?: Readonly<Record<string, unknown>> }).body;
}

/** A fault aimed at the call an operation states its answer waits on. */
export function faultOnCall(
  operationId: OperationId,
  fault: Fault,
  rule: Omit<FaultRule, 'fault' | 'operation' | 'table'> = {},
): FaultRule {
  const { call } = statementOf(operationId);
  return { fault, operation: call.action, table: LOCAL_TABLES[call.table], ...rule };
}

/**
 * Sends an operation the request its statement describes: its route's method and path, each path
 * parameter the id of `pet`, and its stated body.
 */
export function sendStated(api: TestApi, operationId: OperationId, pet: PetBody): Promise<Response> {
  const route = findRoute(operationId);
  const path = route.path.replace(/\{\w+\}/g, String(pet.id));
  const body = statedBody(operationId);
  return api.request(
    path,
    body === undefined
      ? { method: route.method }
      : { method: route.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) },
  );
}

/**
 * A pet stored through the API, whose id a stated request's path names. It also renews the authorizer's
 * cached verdict, so a fault then meets the operation, not the key lookup.
 */
export async function storePet(api: TestApi): Promise<PetBody> {
  return (await api.createPet(newPet())) as unknown as PetBody;
}

/** How many of the proxy's requests since `from` were the operation's stated call; with `fault`, only those it met. */
export function statedCalls(proxy: FaultProxy, operationId: OperationId, from: number, fault?: Fault): number {
  const { call } = statementOf(operationId);
  return proxy.requests
    .slice(from)
    .filter(
      (request) =>
        request.operation === call.action && request.table === LOCAL_TABLES[call.table] && (fault === undefined || request.fault === fault),
    ).length;
}

/**
 * How many stated calls one request makes with the store working (a listing page queries every shard):
 * none means the statement names a call the operation does not make, and no fault would meet it.
 */
export async function callsPerRequest(api: TestApi, proxy: FaultProxy, operationId: OperationId): Promise<number> {
  const pet = await storePet(api);
  const from = proxy.requests.length;
  const response = await sendStated(api, operationId, pet);
  expect(response.status, `${operationId} answers its stated request: fix the body in ${WHERE_STATED}`).toBe(
    findRoute(operationId).successStatus,
  );
  await response.arrayBuffer();
  const calls = statedCalls(proxy, operationId, from);
  const { call } = statementOf(operationId);
  expect(calls, `${operationId} makes no ${call.action} on ${call.table}: name a call it makes in ${WHERE_STATED}`).toBeGreaterThan(0);
  return calls;
}

/** The stated body is one its operation's schema accepts; a statement for a route that reads none has none. */
export function expectStatedBodyValid(operationId: OperationId): void {
  const schema = schemasOf(operationId).body;
  const body = statedBody(operationId);
  if (schema === undefined) expect(body, `${operationId} reads no body`).toBeUndefined();
  else expect(v.safeParse(schema, body).success, `${operationId}'s body in ${WHERE_STATED} is refused by its schema`).toBe(true);
}

/** What the tables a request can change hold: pets by id, and the idempotency records. */
export interface Tables {
  readonly pets: readonly PetBody[];
  readonly idempotency: readonly Record<string, unknown>[];
}

export async function tablesNow(tables: DynamoDBDocumentClient): Promise<Tables> {
  const pets = (await storedPets(tables)).sort((a, b) => a.id - b.id);
  return { pets, idempotency: await idempotencyRecords(tables) };
}

/**
 * The tables hold what a request whose stated call reached the store left: its stated writes, however
 * often the SDK retried the call. A new pet is the one its body described, and the one `answer` returned
 * when it returned one.
 */
export async function expectLeft(
  operationId: OperationId,
  before: Tables,
  tables: DynamoDBDocumentClient,
  answer?: Response,
): Promise<void> {
  const after = await tablesNow(tables);
  const { writes } = statementOf(operationId);
  expect(after.idempotency).toEqual(before.idempotency);
  switch (writes) {
    case 'nothing':
      expect(after.pets).toEqual(before.pets);
      return;
    case 'one pet': {
      const known = new Set(before.pets.map((pet) => pet.id));
      const answered = answer === undefined ? {} : { id: ((await answer.json()) as PetBody).id };
      expect(after.pets.filter((pet) => known.has(pet.id))).toEqual(before.pets);
      expect(after.pets.filter((pet) => !known.has(pet.id))).toEqual([
        expect.objectContaining({ ...statedBody(operationId), ...answered }),
      ]);
      return;
    }
    default:
      unhandled(writes);
  }
}

/** The operation's answer to a failing store: its stated error, with Retry-After. */
export async function expectFailingStoreAnswer(operationId: OperationId, response: Response): Promise<void> {
  const code = statementOf(operationId).failingStore;
  expectRetryAfter(response);
  await expectError(response, ERROR_CODES[code], code);
}
