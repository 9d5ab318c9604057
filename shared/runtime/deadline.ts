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
  /** Made at the first call that could outlive the deadline, with its timer; none when no call could. */
  controller?: AbortController;
  timer?: NodeJS.Timeout;
}

const deadlines = new AsyncLocalStorage<Deadline>();

/**
 * Runs one invocation's work under a deadline derived from the remaining Lambda time: every DynamoDB
 * call made inside it (see shared/dynamodb/dynamodb-client.ts) ends by the deadline, its answer's body,
 * retries and backoff included (on its own, or aborted when it could outlive it), so the handler
 * still answers with our Error body before Lambda cuts it off. AsyncLocalStorage rather than a
 * module variable: the deadline belongs to the calls made inside the invocation, so work an earlier
 * invocation left running never takes a later one's, and a call made outside any invocation (at cold
 * start) has none.
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
 * The abort signal a call of the running invocation must carry so that it cannot outlive the deadline,
 * given the longest the call can take on its own (`callBudgetMs`). Undefined outside an invocation,
 * and for a call the deadline is further away than that: it ends on its own first, and a signal every
 * attempt listens to was a measurable part of a warm request (docs/performance.md). One signal and one
 * timer per invocation, made at the first call that needs it and shared by the calls after it.
 */
export function deadlineSignal(callBudgetMs: number): AbortSignal | undefined {
  const deadline = deadlines.getStore();
  if (deadline === undefined) return undefined;
  if (deadline.controller === undefined) {
    const remaining = deadline.endsAt - Date.now();
    if (remaining >= callBudgetMs) return undefined;
    const controller = new AbortController();
    const abort = () => controller.abort(new DOMException('The invocation deadline has passed', 'TimeoutError'));
    if (remaining > 0) deadline.timer = setTimeout(abort, remaining);
    else abort();
    deadline.controller = controller;
  }
  return deadline.controller.signal;
}
