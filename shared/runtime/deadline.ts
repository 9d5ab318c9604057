import { AsyncLocalStorage } from 'node:async_hooks';

/** Time kept back from the Lambda timeout to answer once the store has given up: the event loop may be busy. */
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
 * Runs one invocation's work under a deadline derived from the remaining Lambda time, which every
 * DynamoDB call inside it respects, so the handler still answers with our Error body before Lambda cuts
 * it off. AsyncLocalStorage, so work an earlier invocation left running never takes a later one's deadline.
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
 * The abort signal a call must carry so that it cannot outlive the deadline, given the longest it can take
 * on its own. Undefined outside an invocation, and when the call ends on its own first, since a signal
 * costs every attempt; one signal and timer per invocation, shared by its calls.
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
