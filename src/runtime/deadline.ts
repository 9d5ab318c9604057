import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Time kept back from the Lambda timeout to answer once the store has given up: building and
 * returning a 503 takes microseconds, but the event loop may be busy and Lambda's clock is not ours.
 */
export const RESPONSE_RESERVE_MS = 500;

/** What the running invocation knows about its own end (a subset of Lambda's `Context`). */
export interface InvocationClock {
  getRemainingTimeInMillis(): number;
}

/** When the running invocation's work must end, in epoch milliseconds. */
const deadlines = new AsyncLocalStorage<number>();

/**
 * Runs one invocation's work under a deadline derived from the remaining Lambda time: every DynamoDB
 * call made inside it (see src/dynamodb/dynamodb-client.ts) is aborted once the deadline passes, retries and
 * backoff included, so the handler still answers with our Error body before Lambda cuts it off.
 * AsyncLocalStorage rather than a module variable: the deadline belongs to the calls made inside the
 * invocation, so work an earlier invocation left running never takes a later one's, and a call made
 * outside any invocation (at cold start) has none.
 */
export function runWithDeadline<T>(clock: InvocationClock, work: () => Promise<T>): Promise<T> {
  const budget = Math.max(0, clock.getRemainingTimeInMillis() - RESPONSE_RESERVE_MS);
  return deadlines.run(Date.now() + budget, work);
}

/**
 * The abort signal a call must carry so it cannot outlive the invocation's deadline, given the
 * longest it may take on its own (its timeouts, retries and backoff): undefined outside an invocation,
 * and when the call would end on its own before the deadline anyway. That is the common case, a
 * request's first call, and it is worth skipping: a deadline signal on every call (a timer, a
 * combined signal, the SDK's listeners on it) is a measurable part of a warm request (docs/performance.md).
 */
export function deadlineSignal(longestCallMs: number): AbortSignal | undefined {
  const endsAt = deadlines.getStore();
  if (endsAt === undefined) return undefined;
  const remaining = endsAt - Date.now();
  return remaining > longestCallMs ? undefined : AbortSignal.timeout(Math.max(0, remaining));
}
