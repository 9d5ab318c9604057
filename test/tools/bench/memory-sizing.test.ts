import { describe, expect, it } from 'vitest';
import {
  FULL_VCPU_MB,
  SIZING_MARGIN,
  cheapestMeetingGoals,
  configuredStands,
  estimateSizes,
  timeAt,
} from '../../../tools/bench/memory-sizing';

describe('the memory estimate of npm run bench', () => {
  it('stretches CPU time by the vCPU share the memory buys and keeps the time spent waiting', () => {
    expect(timeAt(FULL_VCPU_MB, 10, 4)).toBeCloseTo(10);
    expect(timeAt(FULL_VCPU_MB / 2, 10, 4)).toBeCloseTo(6 + 8);
    expect(timeAt(2 * FULL_VCPU_MB, 10, 4)).toBeCloseTo(10);
  });

  it('picks the cheapest setting that meets both goals', () => {
    const estimates = estimateSizes(
      { coldStart: { wallMs: 100, cpuMs: 100 }, warm: { p50Ms: 1, p99Ms: 3, cpuMs: 0.5 } },
      { coldStartMs: 450, warmP99Ms: 50 },
    );
    expect(estimates.map((estimate) => estimate.meetsGoals)).toEqual([false, false, true, true]);
    expect(cheapestMeetingGoals(estimates)?.memoryMiB).toBe(512);
  });

  it('counts a setting as meeting a goal only with the margin to spare, so noise between runs does not change the choice', () => {
    // At 512 MB, 100 ms of cold-start CPU is estimated at 100 × 1769 / 512 ≈ 345.5 ms.
    const atGoal = { coldStartMs: 346, warmP99Ms: 50 };
    const justWithinMargin = { coldStartMs: 346 / (1 - SIZING_MARGIN), warmP99Ms: 50 };
    const measured = { coldStart: { wallMs: 100, cpuMs: 100 }, warm: { p50Ms: 1, p99Ms: 3, cpuMs: 0.5 } };
    expect(cheapestMeetingGoals(estimateSizes(measured, atGoal))?.memoryMiB).toBe(1024);
    expect(cheapestMeetingGoals(estimateSizes(measured, justWithinMargin))?.memoryMiB).toBe(512);
  });

  describe('judges a configured setting', () => {
    // Each case's cold-start CPU puts the estimate at 512 MB (at 256 MB, for half the CPU) either side of the goal:
    // under it with the margin to spare, under it only inside the margin, or over it.
    const measuredAt = (cpuMs: number) => ({ coldStart: { wallMs: cpuMs, cpuMs }, warm: { p50Ms: 1, p99Ms: 3, cpuMs: 0.5 } });
    const goals = { coldStartMs: 400, warmP99Ms: 50 };

    it('to stand while it meets the goals, even inside the margin, so a run a little slower keeps the setting it was chosen with', () => {
      const chosen = cheapestMeetingGoals(estimateSizes(measuredAt(100), goals))!.memoryMiB;
      expect(chosen).toBe(512);
      const slower = estimateSizes(measuredAt(112), goals);
      expect(cheapestMeetingGoals(slower)?.memoryMiB).toBe(1024);
      expect(configuredStands(slower, chosen)).toBe(true);
    });

    it('to fall once it misses a goal', () => {
      expect(configuredStands(estimateSizes(measuredAt(120), goals), 512)).toBe(false);
    });

    it('to fall when a cheaper setting meets the goals with the margin to spare, and to stand when one meets them only inside it', () => {
      expect(configuredStands(estimateSizes(measuredAt(50), goals), 512)).toBe(false);
      expect(configuredStands(estimateSizes(measuredAt(56), goals), 512)).toBe(true);
    });

    it('to fall when it is not a setting the estimate considers', () => {
      expect(configuredStands(estimateSizes(measuredAt(100), goals), 384)).toBe(false);
    });
  });

  it('finds none when no setting meets the goals', () => {
    const estimates = estimateSizes(
      { coldStart: { wallMs: 900, cpuMs: 900 }, warm: { p50Ms: 1, p99Ms: 3, cpuMs: 0.5 } },
      { coldStartMs: 450, warmP99Ms: 50 },
    );
    expect(cheapestMeetingGoals(estimates)).toBeUndefined();
  });
});
