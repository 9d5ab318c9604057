/** The first retry's backoff ceiling, in ms; each later one doubles it, up to MAX_BACKOFF_MS. */
const BASE_BACKOFF_MS = 250;
const MAX_BACKOFF_MS = 8_000;

/**
 * How long to wait before retrying after failed attempt `attempt` (1 for the first): "full jitter" (a random wait up
 * to the doubling ceiling), so clients that failed together do not retry together. A `Retry-After` the answer gave
 * is the least wait: the API says when it will take the request again.
 */
export function retryDelayMs(attempt: number, retryAfter: number | undefined, random: () => number = Math.random): number {
  const jittered = random() * Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** (attempt - 1));
  return Math.max(retryAfter ?? 0, jittered);
}

/** A `Retry-After` header in ms: delay-seconds or an HTTP date (RFC 9110, 10.2.3); undefined when absent or unreadable. */
export function readRetryAfter(header: string | null, now: number = Date.now()): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
export function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
