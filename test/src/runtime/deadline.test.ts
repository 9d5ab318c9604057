import { describe, expect, it } from 'vitest';
import { RESPONSE_RESERVE_MS, deadlineSignal, runWithDeadline } from '../../../src/runtime/deadline';

const clock = (remainingMs: number) => ({ getRemainingTimeInMillis: () => remainingMs });

describe('the abort signal a call gets from the invocation deadline', () => {
  it('is none outside an invocation', () => {
    expect(deadlineSignal(1_000)).toBeUndefined();
  });

  it('is none when the call would end on its own before the deadline', async () => {
    const signal = await runWithDeadline(clock(10_000), async () => deadlineSignal(4_000));
    expect(signal).toBeUndefined();
  });

  it('ends at the deadline when the call could outlive it', async () => {
    const remaining = RESPONSE_RESERVE_MS + 50;
    const signal = await runWithDeadline(clock(remaining), async () => deadlineSignal(4_000));
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal!.aborted).toBe(false);
    await new Promise((resolve) => signal!.addEventListener('abort', resolve));
    expect(signal!.reason).toBeInstanceOf(DOMException);
  });

  it('is already aborted once the deadline has passed', async () => {
    const signal = await runWithDeadline(clock(RESPONSE_RESERVE_MS), async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return deadlineSignal(4_000);
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(signal!.aborted).toBe(true);
  });
});
