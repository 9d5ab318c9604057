import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import { ApiError, createClient, type CallOptions, type Client, type ListPetsQuery, type NewPet } from '../client/create-client';
import { PetListSchema, PetSchema } from '../domain/pets/pet-output-schemas';
import { MAX_ID, type Pet } from '../domain/pets/pet-schemas';
import type { ErrorCode } from '../facts/error-codes';
import { ErrorSchema } from '../http/error-schema';
import { messageOf } from '../runtime/error-message';

/**
 * End-to-end checks of a stage over its public URL, each step within its own time budget, shared by
 * `npm run smoke` (tools/smoke.ts) and the synthetic probe. None of these steps writes.
 */

/** Where a check sends its requests, and as whom. */
export interface CheckTarget {
  /** The stage's base URL, ending in BASE_PATH, without a trailing slash. */
  readonly baseUrl: string;
  /** An API key of that stage: never logged, sent only to `baseUrl`'s origin. */
  readonly apiKey: string;
  /** Names the checker in the access log's `userAgent` and in the paths it makes up. */
  readonly agent: string;
}

/** Why a step failed, in words an operator can act on. */
export class StepFailure extends Error {}

export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** One HTTP exchange within a step's time budget; never follows redirects (they could carry the key elsewhere). */
export async function call(url: string, init: RequestInit, signal: AbortSignal, timeoutMs: number): Promise<Answer> {
  try {
    const response = await fetch(url, { ...init, signal, redirect: 'manual' });
    return { status: response.status, headers: response.headers, text: await response.text() };
  } catch (error) {
    throw noAnswer(url, timeoutMs, signal.aborted, error);
  }
}

/** A step that got no answer at all: its time budget ran out, or the network failed, and why. */
function noAnswer(url: string, timeoutMs: number, timedOut: boolean, error: unknown): StepFailure {
  if (timedOut) return new StepFailure(`no answer within ${timeoutMs / 1000} s from ${url}`);
  return new StepFailure(`could not reach ${url}: ${networkReason(error)}`);
}

/** fetch() says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND, a TLS error) is in its cause. */
function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string; errors?: Array<{ code?: string }> } }).cause;
  return cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? messageOf(error);
}

export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(empty body)';
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

export function expectStatus(answer: Answer, status: number): void {
  if (answer.status === status) return;
  const location = answer.status >= 300 && answer.status < 400 ? ` (redirected to ${answer.headers.get('location')})` : '';
  throw new StepFailure(`expected ${status}, got ${answer.status}${location}: ${excerpt(answer.text)}`);
}

function parseJson(answer: Answer): unknown {
  if (!/^application\/json\b/.test(answer.headers.get('content-type') ?? '')) {
    throw new StepFailure(`expected a JSON body, got Content-Type ${answer.headers.get('content-type')}: ${excerpt(answer.text)}`);
  }
  try {
    return JSON.parse(answer.text);
  } catch {
    throw new StepFailure(`the body is not valid JSON: ${excerpt(answer.text)}`);
  }
}

/** Our Error body exactly (code, message, status, nothing else), not API Gateway's own `{"message": …}`. */
export function expectError(answer: Answer, status: number, code: ErrorCode): void {
  expectStatus(answer, status);
  const body = parseJson(answer);
  const parsed = v.safeParse(ErrorSchema, body);
  const keys = typeof body === 'object' && body !== null ? Object.keys(body).sort().join() : '';
  if (!parsed.success || keys !== 'code,message,status' || parsed.output.code !== code || parsed.output.status !== status) {
    throw new StepFailure(`expected the Error body {"code":"${code}","message":…,"status":${status}}, got ${excerpt(answer.text)}`);
  }
}

export function expectShape<TSchema extends v.GenericSchema>(schema: TSchema, answer: Answer, what: string): v.InferOutput<TSchema> {
  const parsed = v.safeParse(schema, parseJson(answer));
  if (!parsed.success) throw new StepFailure(`expected ${what}, got ${excerpt(answer.text)}`);
  return parsed.output;
}

export interface Step {
  readonly title: string;
  /** A step that needs an earlier one's result: not run, and failed, when this says why it cannot. */
  readonly needs?: () => string | undefined;
  /** Resolves with a short note on success; throws StepFailure otherwise. */
  run(signal: AbortSignal): Promise<string>;
}

/** How one step went. */
export interface StepResult {
  readonly title: string;
  readonly passed: boolean;
  /** The step's note when it passed, why it failed otherwise. */
  readonly detail: string;
  /** Milliseconds the step took; 0 when it was not run. */
  readonly ms: number;
}

/**
 * Runs the steps in order, each within `timeoutMs`, and tells `onResult` of each as it ends. A failed
 * step does not stop the run: the next ones still say what else works.
 */
export async function runSteps(
  steps: readonly Step[],
  timeoutMs: number,
  onResult: (result: StepResult, index: number) => void = () => undefined,
): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const [index, step] of steps.entries()) {
    const missing = step.needs?.();
    let result: StepResult;
    if (missing !== undefined) {
      result = { title: step.title, passed: false, detail: `not run, ${missing}`, ms: 0 };
    } else {
      const started = performance.now();
      try {
        const note = await step.run(AbortSignal.timeout(timeoutMs));
        result = { title: step.title, passed: true, detail: note, ms: Math.round(performance.now() - started) };
      } catch (error) {
        const reason = error instanceof StepFailure ? error.message : `unexpected error: ${String(error)}`;
        result = { title: step.title, passed: false, detail: reason, ms: Math.round(performance.now() - started) };
      }
    }
    results.push(result);
    onResult(result, index);
  }
  return results;
}

/**
 * A step's HTTP exchange: to a path under the base URL (or an absolute URL), as the checker, with
 * the key unless `anonymous`.
 */
export function checkSender(target: CheckTarget, timeoutMs: number) {
  return (pathOrUrl: string, init: RequestInit & { anonymous?: boolean }, signal: AbortSignal) => {
    const { anonymous, ...rest } = init;
    const headers = new Headers(rest.headers);
    headers.set('user-agent', `animal-store-${target.agent}`);
    if (!anonymous) headers.set('authorization', `Bearer ${target.apiKey}`);
    const url = pathOrUrl.startsWith('/') ? `${target.baseUrl}${pathOrUrl}` : pathOrUrl;
    return call(url, { ...rest, headers }, signal, timeoutMs);
  };
}

/**
 * The client a step calls an operation through (shared/client/), as the checker: one attempt each, since a check must
 * see every failure a client would retry, and no timeout of its own, since the step's signal is its deadline (a second
 * one per attempt would cost the probe's cold start Node's AbortSignal.any). With the key unless `anonymous`.
 */
export function checkClient(target: CheckTarget, { anonymous = false } = {}): Client {
  return createClient({
    baseUrl: target.baseUrl,
    ...(anonymous ? {} : { apiKey: target.apiKey }),
    userAgent: `animal-store-${target.agent}`,
    timeoutMs: Infinity,
    maxAttempts: 1,
  });
}

/**
 * One call through the client, as the Answer a step's expectations read: the last answer's status and headers, and
 * its body as text. No answer at all is the step's failure, said as `call` says it (noAnswer).
 */
export async function answerThrough(
  url: string,
  timeoutMs: number,
  signal: AbortSignal,
  operation: (options: CallOptions) => Promise<unknown>,
): Promise<Answer> {
  let answered: { readonly status: number; readonly headers: Headers } | undefined;
  const asText = (body: unknown) => (body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body));
  try {
    const body = await operation({ signal, onAnswer: (answer) => (answered = answer) });
    return { ...answered!, text: asText(body) };
  } catch (error) {
    if (error instanceof ApiError) return { ...answered!, text: asText(error.body) };
    throw noAnswer(url, timeoutMs, signal.aborted, error);
  }
}

/** The first page of a listing: what a step that lists reads. */
export async function firstPage(client: Client, options: CallOptions, query: ListPetsQuery = {}): Promise<unknown> {
  for await (const page of client.listPets(query, options).pages()) return page.pets;
  return undefined;
}

/** GET /pets without a key is 401 with our Error body: the authorizer is in front. */
export function anonymousListIsRefused(target: CheckTarget, timeoutMs: number): Step {
  const client = checkClient(target, { anonymous: true });
  return {
    title: 'GET /pets without a key is 401 with the Error body',
    async run(signal) {
      expectError(
        await answerThrough(`${target.baseUrl}/pets`, timeoutMs, signal, (options) => firstPage(client, options)),
        401,
        'unauthorized',
      );
      return 'the authorizer is in front';
    },
  };
}

/** GET /pets with the key is 200 with a list of pets, which `listed` receives. */
export function listIsServed(target: CheckTarget, timeoutMs: number, listed: (pets: readonly Pet[]) => void = () => undefined): Step {
  const client = checkClient(target);
  return {
    title: 'GET /pets with the key is 200 with a list of pets',
    async run(signal) {
      const answer = await answerThrough(`${target.baseUrl}/pets`, timeoutMs, signal, (options) => firstPage(client, options));
      expectStatus(answer, 200);
      const pets = expectShape(PetListSchema, answer, 'a JSON array of pets');
      listed(pets);
      return `${pets.length} on the first page`;
    },
  };
}

/**
 * GET /pets/{id} reads a pet by its key: the first pet an earlier listing showed is 200 with that
 * same pet; with none listed, an id drawn at random names no pet and is 404. Random, not fixed: ids
 * are spread over the whole range, so a fixed one could one day belong to a real pet for good.
 */
export function petIsRead(target: CheckTarget, timeoutMs: number, listed: () => readonly Pet[] | undefined): Step {
  const client = checkClient(target);
  // getPet is deprecated; this step checks it for as long as the API serves it.
  const read = (id: number, signal: AbortSignal) =>
    answerThrough(`${target.baseUrl}/pets/${id}`, timeoutMs, signal, (options) => client.getPet(id, options));
  return {
    title: 'GET /pets/{id} is 200 with a listed pet, or 404 for an id no pet has',
    async run(signal) {
      const [pet] = listed() ?? [];
      if (pet === undefined) {
        const id = 1 + Math.floor(Math.random() * MAX_ID);
        expectError(await read(id, signal), 404, 'not_found');
        return `no pet listed; unknown pet ${id} is 404`;
      }
      const answer = await read(pet.id, signal);
      expectStatus(answer, 200);
      const fetched = expectShape(PetSchema, answer, 'a pet');
      if (!isDeepStrictEqual(fetched, pet)) throw new StepFailure(`expected ${JSON.stringify(pet)}, got ${excerpt(answer.text)}`);
      return `pet ${pet.id}`;
    },
  };
}

/** POST /pets with a body that is no pet is 400 with our Error body: the create function runs, and stores nothing. */
export function invalidCreateIsRefused(target: CheckTarget, timeoutMs: number): Step {
  const client = checkClient(target);
  return {
    title: 'POST /pets with a body that is no pet is 400 with the Error body',
    async run(signal) {
      // No pet on purpose: the check is that the API refuses it.
      const noPet = {} as NewPet;
      const answer = await answerThrough(`${target.baseUrl}/pets`, timeoutMs, signal, (options) => client.createPet(noPet, options));
      expectError(answer, 400, 'invalid_parameter');
      return 'the create function answers, nothing stored';
    },
  };
}

/** A path no route has is 404 with our Error body: the `$default` route answers. */
export function unknownPathIsNotFound(target: CheckTarget, timeoutMs: number): Step {
  const send = checkSender(target, timeoutMs);
  return {
    title: 'an unknown path is 404 with the Error body',
    async run(signal) {
      expectError(await send(`/${target.agent}-no-such-route`, {}, signal), 404, 'not_found');
      return 'the $default route answers';
    },
  };
}
