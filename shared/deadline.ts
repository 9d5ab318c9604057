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

const deadlines = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs one invocation's work under a deadline derived from the remaining Lambda time: every DynamoDB
 * call made inside it (see shared/dynamodb.ts) is aborted once the deadline passes, retries and
 * backoff included, so the handler still answers with our Error body before Lambda cuts it off.
 * AsyncLocalStorage rather than a module variable: the local runtime may run invocations of one
 * function instance concurrently, which Lambda never does.
 */
export function runWithDeadline<T>(clock: InvocationClock, work: () => Promise<T>): Promise<T> {
  const budget = Math.max(0, clock.getRemainingTimeInMillis() - RESPONSE_RESERVE_MS);
  return deadlines.run(AbortSignal.timeout(budget), work);
}

/** The deadline of the invocation this code runs in, as an abort signal; undefined outside one. */
export function currentDeadline(): AbortSignal | undefined {
  return deadlines.getStore();
}
