import { inject } from 'vitest';
import { synthesize, type Synthesis, type SynthesizedStage } from '../../tools/lambda/synth';

/** The app as `cdk synth` builds it, shared: read it, never dispose of it. */
export type SharedSynthesis = Omit<Synthesis, 'dispose'>;

let shared: SharedSynthesis | undefined;

/**
 * The whole app, every stage, synthesized as `cdk synth` does it (bundles included) once per test
 * worker: the infra project runs its files without isolation (vitest.config.ts), so the files of one
 * worker read the same assembly, and its directory goes when the run ends (test/helpers/synthesis-dir.ts).
 * Its templates are frozen, so a test that changes one fails instead of misleading the next file; a
 * test that needs other props or a changed tree synthesizes its own.
 */
export function synthesizedApp(): SharedSynthesis {
  if (!shared) {
    const { dispose: _owned, ...synthesis } = synthesize({ parentDir: inject('synthesisDir') });
    for (const stage of synthesis.stages) deepFreeze(stage.json);
    shared = synthesis;
  }
  return shared;
}

/** One stage of the shared synthesis. */
export function synthesizedStage(name: string): SynthesizedStage {
  return synthesizedApp().stage(name);
}

function deepFreeze(value: unknown): void {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
