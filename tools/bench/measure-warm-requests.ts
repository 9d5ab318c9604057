import { production, type StageConfig, stages } from '../../infra/stages';
import { authorizerEvent } from '../lambda/events';
import { API_FUNCTIONS, ROUTE_FUNCTIONS } from '../../shared/facts/function-names';
import { issuesCommand } from './bench-functions';
import type { BenchSetup } from './bench-setup';
import type { BenchSettings } from './bench-settings';
import { benchEvents, expectedOutcome, keyEvent } from './bench-events';
import { progress } from './format';
import { compareWarmInstructions, type WarmInstructionComparison } from './instructions';
import { measureWarm, type WarmOptions, type WarmResult, type WarmSubject } from './warm';
import type { ApiFunctionName } from '../../shared/facts/function-names';

export interface RouteWarmResult {
  readonly fn: WarmResult;
  readonly floor: WarmResult;
}

export interface AuthorizerWarmResult {
  /** A key it verified lately: the common case, answered from memory. */
  readonly cached: WarmResult;
  /** A key it has not seen: one GetItem. */
  readonly uncached: WarmResult;
  readonly missing: WarmResult;
  /** Looks every key up. */
  readonly floor: WarmResult;
}

export interface WarmRequestResults {
  readonly warm: ReadonlyMap<ApiFunctionName, RouteWarmResult>;
  /** By stage name: each stage's log level changes what the authorizer writes. */
  readonly authorizer: ReadonlyMap<string, AuthorizerWarmResult>;
  /** With --instructions only: each function that issues a command against its floor, the authorizer with new keys, in production. */
  readonly instructions: ReadonlyMap<ApiFunctionName, WarmInstructionComparison>;
}

/** A route function's requests and its floor's: one per request the runner sends. */
async function routeSubjects(
  bench: BenchSetup,
  name: ApiFunctionName,
  options: WarmOptions,
): Promise<[fn: WarmSubject, floor: WarmSubject]> {
  const asset = bench.productionAssets.get(name)!;
  const env = asset.environment(bench.local);
  const sent = options.warmup + options.rounds * options.batch;
  const events = async () => benchEvents(name, bench.requests, await bench.iterationsFor(name, sent));
  return [
    { label: name, taskRoot: asset.taskRoot, env, events: await events() },
    { label: `${name} floor`, taskRoot: bench.floorOf(name), env, events: await events() },
  ];
}

/** The stage's authorizer with a new key each request, its floor with the same keys, then with a cached key and with none. */
async function authorizerSubjects(bench: BenchSetup, stage: StageConfig, options: WarmOptions): Promise<WarmSubject[]> {
  const asset = bench.assets.get(stage.name)!.get('authorizer')!;
  const env = asset.environment(bench.local);
  const fresh = (await bench.issueKeys(options.warmup + options.rounds * options.batch)).map(keyEvent);
  return [
    { label: 'new key', taskRoot: asset.taskRoot, env, events: fresh },
    { label: 'floor', taskRoot: bench.floorOf('authorizer'), env, events: fresh },
    { label: 'cached key', taskRoot: asset.taskRoot, env, events: [keyEvent(bench.requests.apiKey)] },
    { label: 'no key', taskRoot: asset.taskRoot, env, events: [authorizerEvent()] },
  ];
}

/**
 * Warm requests of each route function interleaved with its floor in one process, then the authorizer at each stage's
 * log level; with `countInstructions`, each judged function and its floor once more, apart, under callgrind.
 */
export async function measureWarmRequests(
  bench: BenchSetup,
  settings: BenchSettings,
  countInstructions: boolean,
): Promise<WarmRequestResults> {
  const warm = new Map<ApiFunctionName, RouteWarmResult>();
  for (const name of ROUTE_FUNCTIONS) {
    progress(`warm: ${name} and its floor`);
    const [fn, floor] = await measureWarm(bench.node, await routeSubjects(bench, name, settings.warm), settings.warm);
    expectOnly(fn!, expectedOutcome(name));
    warm.set(name, { fn: fn!, floor: floor! });
  }

  const authorizer = new Map<string, AuthorizerWarmResult>();
  for (const stage of stages) {
    progress(`warm: the authorizer of ${stage.name} (log level ${stage.logLevel})`);
    const [uncached, floor, cached, missing] = await measureWarm(
      bench.node,
      await authorizerSubjects(bench, stage, settings.warm),
      settings.warm,
    );
    expectOnly(cached!, 'allowed');
    expectOnly(uncached!, 'allowed');
    expectOnly(missing!, 'missing');
    authorizer.set(stage.name, { cached: cached!, uncached: uncached!, missing: missing!, floor: floor! });
  }

  const instructions = new Map<ApiFunctionName, WarmInstructionComparison>();
  for (const name of countInstructions ? API_FUNCTIONS.filter(issuesCommand) : []) {
    progress(`instructions: ${name} and its floor warm, under callgrind`);
    const options = settings.instructionWarm;
    const [fn, floor] =
      name === 'authorizer' ? await authorizerSubjects(bench, production, options) : await routeSubjects(bench, name, options);
    const { answered, ...counted } = await compareWarmInstructions(bench.node, fn!, floor!, options);
    expectOnly(answered, expectedOutcome(name));
    instructions.set(name, counted);
  }
  return { warm, authorizer, instructions };
}

/** A benchmark of other answers would measure the wrong path: every request must have been answered as intended. */
export function expectOnly(result: WarmResult, outcome: number | string): void {
  const answered = Object.keys(result.statuses);
  if (answered.length !== 1 || answered[0] !== String(outcome)) {
    throw new Error(`${result.label} was answered ${JSON.stringify(result.statuses)}, not only ${outcome}`);
  }
}
