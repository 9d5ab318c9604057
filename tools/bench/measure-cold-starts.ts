import { API_FUNCTIONS } from '../../shared/facts/function-names';
import { issuesCommand } from './bench-functions';
import type { BenchSetup } from './bench-setup';
import type { BenchSettings } from './bench-settings';
import { compareColdStarts, type ColdStartComparison, type ColdSubject } from './cold-start';
import { benchEvents, expectedOutcome, expectOutcome } from './bench-events';
import { progress } from './format';
import type { FloorBuild } from './floors';
import { compareInstructions, type InstructionComparison } from './instructions';
import type { ApiFunctionName } from '../../shared/facts/function-names';

export interface ColdStartResults {
  /** Each function against its floor, with production's configuration. */
  readonly cold: ReadonlyMap<ApiFunctionName, ColdStartComparison>;
  /** With --instructions only: the same cold starts counted in instructions, steady enough to weigh a small change. */
  readonly instructions: ReadonlyMap<ApiFunctionName, InstructionComparison>;
}

/** A function's cold starts and its floor's, over `runs` runs: each run's first request its own. */
async function coldSubjects(
  bench: BenchSetup,
  name: ApiFunctionName,
  runs: number,
  build: FloorBuild = 'alike',
): Promise<{ fn: ColdSubject; floor: ColdSubject }> {
  const asset = bench.productionAssets.get(name)!;
  const env = asset.environment(bench.local);
  const events = async () => benchEvents(name, bench.requests, await bench.iterationsFor(name, runs));
  return {
    fn: {
      taskRoot: asset.taskRoot,
      env,
      events: await events(),
      expect: expectOutcome(`${name} on its cold start`, expectedOutcome(name)),
    },
    floor: { taskRoot: bench.floorOf(name, build), env, events: await events(), expect: () => {} },
  };
}

export async function measureColdStarts(bench: BenchSetup, settings: BenchSettings, countInstructions: boolean): Promise<ColdStartResults> {
  const cold = new Map<ApiFunctionName, ColdStartComparison>();
  for (const name of API_FUNCTIONS) {
    progress(`cold starts: ${name} and its floor, ${settings.coldRuns} runs each`);
    const { fn, floor } = await coldSubjects(bench, name, settings.coldRuns);
    cold.set(name, await compareColdStarts(bench.node, fn, floor, settings.coldRuns));
  }

  const instructions = new Map<ApiFunctionName, InstructionComparison>();
  if (countInstructions) {
    for (const name of API_FUNCTIONS.filter(issuesCommand)) {
      progress(`instructions: ${name} and its floor, built three ways, under callgrind, ${settings.instructionRuns} runs each`);
      const runs = settings.instructionRuns;
      const floorBuilt = async (build: FloorBuild) => (await coldSubjects(bench, name, runs, build)).floor;
      const floors = { alike: await floorBuilt('alike'), esm: await floorBuilt('esm'), cdkDefault: await floorBuilt('cdkDefault') };
      instructions.set(name, await compareInstructions(bench.node, (await coldSubjects(bench, name, runs)).fn, floors, runs));
    }
  }
  return { cold, instructions };
}
