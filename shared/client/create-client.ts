// The client package's own modules import each other as `.js`: it is published as ES modules, which Node resolves
// only by their full names, and TypeScript maps each `.js` to its `.ts` source.
import { ApiError, type ErrorCode } from './api-error.js';
import type { components, operations } from './api-types.js';
import { readRetryAfter, retryDelayMs, wait } from './retry-policy.js';

export { ApiError, type ErrorCode };

export type Pet = components['schemas']['Pet'];
export type NewPet = components['schemas']['NewPet'];
export type PetStatus = components['schemas']['PetStatus'];
/** What narrows a listing: the cursor is the client's to follow, not the caller's. */
export type ListPetsQuery = Omit<NonNullable<operations['listPets']['parameters']['query']>, 'cursor'>;

export interface ClientOptions {
  /** A stage's base address as openapi.json's `servers` give it, ending in `/v1`. */
  readonly baseUrl: string;
  /** An API key of that stage, sent as a bearer token; without one, every request is anonymous, and refused 401. */
  readonly apiKey?: string;
  /** How long one attempt waits for its whole answer, in ms: 10,000 unless given; `Infinity` leaves it to the call's `signal`. */
  readonly timeoutMs?: number;
  /** Attempts per call, the first included: 4 unless given; 1 never retries (a probe that must see each failure). */
  readonly maxAttempts?: number;
  /** Sent as `User-Agent`, which names the caller in the API's access log, where the platform lets a page set it. */
  readonly userAgent?: string;
}

export interface CallOptions {
  /** Aborts the call, its retries and their waits included; it rejects with the signal's reason. */
  readonly signal?: AbortSignal;
  /** Told of each answer the call's attempts get, retried ones included: its status and headers (`Location`, `Retry-After`…). */
  readonly onAnswer?: (answer: { readonly status: number; readonly headers: Headers }) => void;
}

export interface CreatePetOptions extends CallOptions {
  /**
   * Makes retries safe: the API stores one pet per key, for at least 24 hours. A new UUID is sent when none is
   * given; give your own to retry across calls (after a crash, say), the same key always with the same pet.
   */
  readonly idempotencyKey?: string;
}

/** One page of a listing. */
export interface PetPage {
  readonly pets: Pet[];
  /** The next page's URL (its `Link: rel="next"`); undefined on the last page. */
  readonly next: string | undefined;
}

/** Every pet the listing matches, newest first, fetched a page at a time as iteration needs them. */
export interface PetListing extends AsyncIterable<Pet> {
  /** The same listing a page at a time. */
  pages(): AsyncIterable<PetPage>;
}

export interface Client {
  listPets(query?: ListPetsQuery, options?: CallOptions): PetListing;
  /**
   * Adds a pet and resolves to it, as stored. Network failures, 5xx, 429 and a 409 for its own key still in progress
   * are retried with backoff and jitter, waiting at least what `Retry-After` asks, always with the same key and body:
   * however many attempts reach the API, it stores one pet.
   */
  createPet(newPet: NewPet, options?: CreatePetOptions): Promise<Pet>;
  /**
   * @deprecated The API removes `GET /pets/{petId}` on 5 December 2030 (its `Sunset` header): use
   * `listPets({ status })`, its `successor-version`, instead.
   */
  getPet(petId: number, options?: CallOptions): Promise<Pet>;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_ATTEMPTS = 4;
/** A `Retry-After` longer than this ends the retries: the call rejects with that answer rather than hang a minute. */
const MAX_RETRY_AFTER_MS = 60_000;

/** A client of one stage of the API, as one caller (its API key). */
export function createClient(options: ClientOptions): Client {
  const base = options.baseUrl.replace(/\/+$/, '');
  const origin = new URL(base).origin;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const commonHeaders: Record<string, string> = {
    accept: 'application/json',
    ...(options.apiKey === undefined ? {} : { authorization: `Bearer ${options.apiKey}` }),
    ...(options.userAgent === undefined ? {} : { 'user-agent': options.userAgent }),
  };

  /** One call: its attempts until a success, an answer not worth retrying, or the last attempt. */
  async function call(url: string, init: RequestInit, { signal, onAnswer }: CallOptions): Promise<{ response: Response; body: unknown }> {
    // The key goes to the stage's origin only: a next link elsewhere is a fault, never followed.
    if (new URL(url).origin !== origin) throw new Error(`refusing to send the API key to ${new URL(url).origin}, not ${origin}`);
    for (let attempt = 1; ; attempt++) {
      let failure: unknown;
      let retryAfter: number | undefined;
      try {
        // Never follow a redirect: it could carry the key elsewhere.
        const response = await fetch(url, {
          ...init,
          headers: { ...commonHeaders, ...init.headers },
          signal: attemptSignal(timeoutMs, signal),
          redirect: 'manual',
        });
        const body = await readBody(response);
        onAnswer?.({ status: response.status, headers: response.headers });
        if (response.ok) return { response, body };
        const refusal = new ApiError(response.status, body, response.headers.get('apigw-requestid') ?? undefined);
        failure = refusal;
        if (!isRetried(response.status, refusal.code)) throw refusal;
        retryAfter = readRetryAfter(response.headers.get('retry-after'));
        if ((retryAfter ?? 0) > MAX_RETRY_AFTER_MS) throw refusal;
      } catch (error) {
        if (error === failure) throw error;
        if (signal?.aborted) throw signal.reason;
        // No answer: the network failed or the attempt timed out; whether the request ran is unknown.
        failure = error;
      }
      if (attempt >= maxAttempts) throw failure;
      await wait(retryDelayMs(attempt, retryAfter), signal);
    }
  }

  function listPets(query: ListPetsQuery = {}, options: CallOptions = {}): PetListing {
    const first = new URL(`${base}/pets`);
    for (const [name, value] of Object.entries(query)) if (value !== undefined) first.searchParams.set(name, String(value));
    async function* pages(): AsyncGenerator<PetPage> {
      for (let url: string | undefined = first.href; url !== undefined; ) {
        const { response, body } = await call(url, {}, options);
        const page: PetPage = { pets: body as Pet[], next: nextLink(response.headers.get('link'), url) };
        yield page;
        url = page.next;
      }
    }
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page.pets;
      },
    };
  }

  async function createPet(newPet: NewPet, options: CreatePetOptions = {}): Promise<Pet> {
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() },
      body: JSON.stringify(newPet),
    };
    return (await call(`${base}/pets`, init, options)).body as Pet;
  }

  async function getPet(petId: number, options: CallOptions = {}): Promise<Pet> {
    return (await call(`${base}/pets/${encodeURIComponent(petId)}`, {}, options)).body as Pet;
  }

  return { listPets, createPet, getPet };
}

/** One attempt's signal: the call's, and the attempt's own timeout unless it has none (`Infinity`). */
function attemptSignal(timeoutMs: number, signal: AbortSignal | undefined): AbortSignal | undefined {
  if (timeoutMs === Infinity) return signal;
  const timeout = AbortSignal.timeout(timeoutMs);
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** Worth another attempt: the API or its gateway was overloaded or failed, or the same key's first request is still running. */
function isRetried(status: number, code: ErrorCode | undefined): boolean {
  return status === 429 || status >= 500 || code === 'idempotency_key_in_use';
}

/** A JSON body as a value, any other as its text, none as undefined. */
async function readBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === '') return undefined;
  if (!/^application\/(.+\+)?json\b/.test(response.headers.get('content-type') ?? '')) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The `rel="next"` target of a `Link` header (RFC 8288), resolved against the page's URL. */
export function nextLink(header: string | null, pageUrl: string): string | undefined {
  for (const link of header?.split(/,(?=\s*<)/) ?? []) {
    const match = /^\s*<([^>]*)>(.*)$/.exec(link);
    if (match && /;\s*rel\s*=\s*"?([^";]*\s)?next(\s[^";]*)?"?\s*(;|$)/i.test(match[2]!)) return new URL(match[1]!, pageUrl).href;
  }
  return undefined;
}
