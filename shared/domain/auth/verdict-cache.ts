import type { AuthorizerContext } from './authorizer-context';

/** The verdicts one function instance keeps by key digest, each trusted until its own time. */
export interface VerdictCache {
  /** The verdict on `keyHash` while it is trusted at `now`; finding it makes it the most recently used. */
  find(keyHash: string, now: number): AuthorizerContext | undefined;
  /** Keeps a verdict until `until` (milliseconds since the epoch), in place of any earlier one. */
  keep(keyHash: string, verdict: AuthorizerContext, until: number): void;
}

interface Kept {
  readonly verdict: AuthorizerContext;
  readonly until: number;
}

/**
 * Accepted keys and refused tokens are kept apart, at most `maxEach` of each, the least recently used
 * going first: a flood of unknown tokens pushes out only other refusals, never a key in use. Finding a
 * verdict never extends its time, so a revocation is seen once it runs out, however often the key is used.
 */
export function createVerdictCache(maxEach: number): VerdictCache {
  const accepted = new Map<string, Kept>();
  const refused = new Map<string, Kept>();
  const sideOf = (verdict: AuthorizerContext) => (verdict.outcome === 'allowed' ? accepted : refused);

  return {
    find(keyHash, now) {
      for (const side of [accepted, refused]) {
        const kept = side.get(keyHash);
        if (kept === undefined) continue;
        // A Map iterates in insertion order: inserted again, the entry is the last to be pushed out.
        side.delete(keyHash);
        if (kept.until <= now) return undefined;
        side.set(keyHash, kept);
        return kept.verdict;
      }
      return undefined;
    },
    keep(keyHash, verdict, until) {
      accepted.delete(keyHash);
      refused.delete(keyHash);
      const side = sideOf(verdict);
      if (side.size >= maxEach) side.delete(side.keys().next().value!);
      side.set(keyHash, { verdict, until });
    },
  };
}
