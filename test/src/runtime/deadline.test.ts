import { describe, expect, it } from 'vitest';
import { RESPONSE_RESERVE_MS, deadlineSignal, runWithDeadline } from '../../../src/runtime/deadline';

const clock = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs });

describe('the abort signal a call gets from the invocation deadline', () => {
  it('is none outside an invocation', () => {
    expect(deadlineSignal()).toBeUndefined();
  });

  it('is given to every call, the first included, and is the same signal for every call of one invocation', async () => {
    const [first, second] = await runWithDeadline(clock(10_000), async () => [deadlineSignal(), deadlineSignal()]);
    expect(first).toBeInstanceOf(AbortSignal);
    expect(first!.aborted).toBe(false);
    expect(second).toBe(first);
  });

  it('is a signal of its own for each invocation, even concurrent ones', async () => {
    const [one, other] = await Promise.all([
      runWithDeadline(clock(10_000), async () => deadlineSignal()),
      runWithDeadline(clock(10_000), async () => deadlineSignal()),
    ]);
    expect(one).not.toBe(other);
  });

  it('ends at the deadline', async () => {
    const remaining = RESPONSE_RESERVE_MS + 50;
    const started = performance.now();
    const signal = await runWithDeadline(clock(remaining), async () => {
      const signal = deadlineSignal()!;
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
      return deadlineSignal();
    });
    expect(signal!.aborted).toBe(true);
  });

  it('is not aborted after its invocation has answered in time: the timer goes with it', async () => {
    const signal = await runWithDeadline(clock(RESPONSE_RESERVE_MS + 30), async () => deadlineSignal());
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(signal!.aborted).toBe(false);
  });
});
