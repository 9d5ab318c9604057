import { describe, expect, it } from 'vitest';
import { RESPONSE_RESERVE_MS, deadlineSignal, runWithDeadline } from '../../../shared/runtime/deadline';

const clock = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs });
/** The longest a call may take on its own, in these tests. */
const CALL_BUDGET_MS = 3_000;
/** Time left for an invocation whose deadline is further away than a whole call. */
const AMPLE_MS = RESPONSE_RESERVE_MS + CALL_BUDGET_MS + 1_000;
/** Time left for an invocation whose deadline a call could outlive. */
const SHORT_MS = RESPONSE_RESERVE_MS + CALL_BUDGET_MS - 1_000;

describe('the abort signal a call gets from the invocation deadline', () => {
  it('is none outside an invocation', () => {
    expect(deadlineSignal(CALL_BUDGET_MS)).toBeUndefined();
  });

  it('is none for a call that ends on its own before the deadline', async () => {
    const signal = await runWithDeadline(clock(AMPLE_MS), async () => deadlineSignal(CALL_BUDGET_MS));
    expect(signal).toBeUndefined();
  });

  it('is given to a call that could outlive the deadline, the first included, and is the same signal for every call of one invocation', async () => {
    const [first, second] = await runWithDeadline(clock(SHORT_MS), async () => [
      deadlineSignal(CALL_BUDGET_MS),
      deadlineSignal(CALL_BUDGET_MS),
    ]);
    expect(first).toBeInstanceOf(AbortSignal);
    expect(first!.aborted).toBe(false);
    expect(second).toBe(first);
  });

  it('is given to a later call once the deadline has come nearer than that call could take', async () => {
    const [early, late] = await runWithDeadline(clock(AMPLE_MS), async () => [deadlineSignal(CALL_BUDGET_MS), deadlineSignal(AMPLE_MS)]);
    expect(early).toBeUndefined();
    expect(late).toBeInstanceOf(AbortSignal);
  });

  it('is a signal of its own for each invocation, even concurrent ones', async () => {
    const [one, other] = await Promise.all([
      runWithDeadline(clock(SHORT_MS), async () => deadlineSignal(CALL_BUDGET_MS)),
      runWithDeadline(clock(SHORT_MS), async () => deadlineSignal(CALL_BUDGET_MS)),
    ]);
    expect(one).not.toBe(other);
  });

  it('ends at the deadline', async () => {
    const remaining = RESPONSE_RESERVE_MS + 50;
    const started = performance.now();
    const signal = await runWithDeadline(clock(remaining), async () => {
      const signal = deadlineSignal(CALL_BUDGET_MS)!;
      expect(signal.aborted).toBe(false);
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      return signal;
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(remaining - RESPONSE_RESERVE_MS - 5);
    expect(signal.reason).toBeInstanceOf(DOMException);
  });

  it('is already aborted once the deadline has passed', async () => {
    const signal = await runWithDeadline(clock(RESPONSE_RESERVE_MS), async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return deadlineSignal(CALL_BUDGET_MS);
    });
    expect(signal!.aborted).toBe(true);
  });

  it('is not aborted after its invocation has answered in time: the timer goes with it', async () => {
    const signal = await runWithDeadline(clock(RESPONSE_RESERVE_MS + 30), async () => deadlineSignal(CALL_BUDGET_MS));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal!.aborted).toBe(false);
  });
});
