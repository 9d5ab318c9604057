import { type DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import type { PetStatus } from '../../shared/domain/pets/pet-schemas';
import { DynamoPetStore } from '../../shared/dynamodb/dynamo-pet-store';
import { LOCAL_TABLES } from '../../local/dynamodb-local';
import { LISTING } from '../../shared/facts/listing';
import { nextLink } from './http';
import type { TestApi } from './local-api';

export interface PetBody {
  id: number;
  name: string;
  categoryId: number;
  status?: PetStatus;
}

let petCounter = 0;

/** A valid NewPet body with a unique name; override any field (or add invalid ones). */
export function newPet(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  petCounter += 1;
  return { name: `Pet ${petCounter}`, categoryId: 1, ...overrides };
}

/** POST /pets with a body sent exactly as given (a string is sent raw) and a JSON content type by default. */
export function postPet(
  api: TestApi,
  body: string | Uint8Array | Record<string, unknown>,
  headers: Record<string, string> = { 'content-type': 'application/json' },
  init: { anonymous?: boolean } = {},
): Promise<Response> {
  const payload = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
  return api.request('/pets', { method: 'POST', headers, body: payload as string, ...init });
}

export interface Walk {
  readonly pets: PetBody[];
  /** Number of pages fetched. */
  readonly pages: number;
  /** The Link URL of every page but the last. */
  readonly links: URL[];
}

/**
 * Lists pets page by page following `Link: rel="next"` until the last page, as a client would.
 * `limits` gives the page size per page (the last one repeats), so a walk can change it between pages.
 */
export async function walkPets(
  api: Pick<TestApi, 'request'>,
  options: { status?: PetStatus; limits?: readonly number[] } = {},
): Promise<Walk> {
  const limits = options.limits ?? [100];
  const pets: PetBody[] = [];
  const links: URL[] = [];
  const first = new URLSearchParams({ limit: String(limits[0]) });
  if (options.status) first.set('status', options.status);
  let path = `/pets?${first}`;
  for (let page = 1; ; page++) {
    const response = await api.request(path);
    expect(response.status, `page ${page} of ${path}`).toBe(200);
    const body = (await response.json()) as PetBody[];
    expect(Array.isArray(body)).toBe(true);
    pets.push(...body);
    const next = nextLink(response);
    if (next === undefined) return { pets, pages: page, links };
    expect(page, 'too many pages: the walk does not end').toBeLessThan(1000);
    links.push(next);
    const limit = limits[Math.min(page, limits.length - 1)]!;
    next.searchParams.set('limit', String(limit));
    path = `/pets?${next.searchParams}`;
  }
}

/** Ids of every pet the API lists, in order. */
export async function listedIds(api: Pick<TestApi, 'request'>, status?: PetStatus): Promise<number[]> {
  return (await walkPets(api, { status })).pets.map((pet) => pet.id);
}

export function petStore(client: DynamoDBDocumentClient): DynamoPetStore {
  return new DynamoPetStore(client, LOCAL_TABLES.pets, LISTING.shards);
}

export function apiKeyStore(client: DynamoDBDocumentClient): DynamoApiKeyStore {
  return new DynamoApiKeyStore(client, LOCAL_TABLES.apiKeys);
}

export interface StoredPet {
  readonly id: number;
  readonly createdAt: string;
  readonly status?: PetStatus;
}

/**
 * The expected listing order, computed from the table itself: newest first, ties broken by id
 * (descending, like the creation time). Optionally only the pets of one status.
 */
export async function expectedOrder(client: DynamoDBDocumentClient, status?: PetStatus): Promise<number[]> {
  const items = (await scanTable(client, LOCAL_TABLES.pets)) as unknown as StoredPet[];
  return items
    .filter((item) => status === undefined || item.status === status)
    .sort((a, b) => (a.createdAt === b.createdAt ? b.id - a.id : a.createdAt < b.createdAt ? 1 : -1))
    .map((item) => item.id);
}

/** Every item of a local table, read straight from DynamoDB (not through the API). */
export async function scanTable(client: DynamoDBDocumentClient, tableName: string): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(new ScanCommand({ TableName: tableName, ExclusiveStartKey: start, ConsistentRead: true }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** The pets table's items, with what the API returns of each. */
export async function storedPets(client: DynamoDBDocumentClient): Promise<Array<PetBody & { createdAt: string }>> {
  return (await scanTable(client, LOCAL_TABLES.pets)) as unknown as Array<PetBody & { createdAt: string }>;
}

/** The idempotency table's records (id, status, expiration, in_progress_expiration, data, validation). */
export async function idempotencyRecords(client: DynamoDBDocumentClient): Promise<Array<Record<string, unknown>>> {
  return scanTable(client, LOCAL_TABLES.idempotency);
}

/** POST /pets with an Idempotency-Key, as a client that retries would send it. */
export function postPetWithKey(
  api: TestApi,
  body: Record<string, unknown>,
  idempotencyKey: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return postPet(api, body, { 'content-type': 'application/json', 'idempotency-key': idempotencyKey, ...headers });
}

/** The stored pets of one body's name: each fault test uses its own name, so this is what it created. */
export async function petsNamed(client: DynamoDBDocumentClient, name: unknown): Promise<PetBody[]> {
  return (await storedPets(client)).filter((pet) => pet.name === name);
}

/** A client that retries 5xx and 409 with the same key and body, honouring Retry-After. */
export async function createUntilDone(api: TestApi, body: Record<string, unknown>, key: string, attempts = 30): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await postPetWithKey(api, body, key);
    if ((response.status < 500 && response.status !== 409) || attempt === attempts) return response;
    await response.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000));
  }
}
