import { describe, expect, it } from 'vitest';
import { readRetryAfter, retryDelayMs, wait } from '../../../shared/client/retry-policy';

describe("the client's retry policy", () => {
  it('waits a random time up to a ceiling that doubles with each failed attempt, up to 8 s', () => {
    const most = (attempt: number) => retryDelayMs(attempt, undefined, () => 1);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(most)).toEqual([250, 500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(retryDelayMs(3, undefined, () => 0)).toBe(0);
    expect(retryDelayMs(3, undefined, () => 0.5)).toBe(500);
  });

  it('waits at least what Retry-After asks', () => {
    expect(retryDelayMs(1, 1000, () => 1)).toBe(1000);
    expect(retryDelayMs(7, 1000, () => 1)).toBe(8000);
  });

  it('reads Retry-After as seconds or as an HTTP date, and nothing else', () => {
    const now = Date.parse('2026-12-07T10:00:00Z');
    expect(readRetryAfter('2', now)).toBe(2000);
    expect(readRetryAfter(' 0 ', now)).toBe(0);
    expect(readRetryAfter('Mon, 07 Dec 2026 10:00:05 GMT', now)).toBe(5000);
    expect(readRetryAfter('Mon, 07 Dec 2026 09:59:00 GMT', now)).toBe(0);
    expect(readRetryAfter(null, now)).toBeUndefined();
    expect(readRetryAfter('soon', now)).toBeUndefined();
  });

  it("ends a wait with the signal's reason as soon as it aborts", async () => {
    const controller = new AbortController();
    const waiting = wait(60_000, controller.signal);
    controller.abort(new Error('left'));
    await expect(waiting).rejects.toThrow('left');
    await expect(wait(10, AbortSignal.abort(new Error('gone')))).rejects.toThrow('gone');
  });
});
