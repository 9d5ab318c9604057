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

/** When the running invocation's work must end, and the one signal that says so once it has. */
interface Deadline {
  /** Epoch milliseconds. */
  readonly endsAt: number;
  /** Made at the invocation's first call, with its timer; none for an invocation that makes no call. */
  controller?: AbortController;
  timer?: NodeJS.Timeout;
}

const deadlines = new AsyncLocalStorage<Deadline>();

/**
 * Runs one invocation's work under a deadline derived from the remaining Lambda time: every DynamoDB
 * call made inside it (see src/dynamodb/dynamodb-client.ts) is aborted once the deadline passes, its
 * answer's body, retries and backoff included, so the handler still answers with our Error body
 * before Lambda cuts it off. AsyncLocalStorage rather than a module variable: the deadline belongs to
 * the calls made inside the invocation, so work an earlier invocation left running never takes a
 * later one's, and a call made outside any invocation (at cold start) has none.
 */
export async function runWithDeadline<T>(clock: InvocationClock, work: () => Promise<T>): Promise<T> {
  const budget = Math.max(0, clock.getRemainingTimeInMillis() - RESPONSE_RESERVE_MS);
  const deadline: Deadline = { endsAt: Date.now() + budget };
  try {
    return await deadlines.run(deadline, work);
  } finally {
    clearTimeout(deadline.timer);
  }
}

/**
 * The abort signal every call of the running invocation carries, so none can outlive its deadline;
 * undefined outside an invocation. One signal and one timer per invocation, made at its first call
 * and shared by the calls after it: a timer and a combined signal per call was a measurable part of
 * a warm request (docs/performance.md).
 */
export function deadlineSignal(): AbortSignal | undefined {
  const deadline = deadlines.getStore();
  if (deadline === undefined) return undefined;
  if (deadline.controller === undefined) {
    const controller = new AbortController();
    const abort = () => controller.abort(new DOMException('The invocation deadline has passed', 'TimeoutError'));
    const remaining = deadline.endsAt - Date.now();
    if (remaining > 0) deadline.timer = setTimeout(abort, remaining);
    else abort();
    deadline.controller = controller;
  }
  return deadline.controller.signal;
}
