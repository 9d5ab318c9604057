import type { FunctionName } from '../../infra/api-functions';
import { stages } from '../../infra/stages';
import { authorizerEvent, type httpEvent } from '../lambda/events';
import { ROUTE_FUNCTIONS } from './bench-functions';
import type { BenchSetup } from './bench-setup';
import type { BenchSettings } from './bench-settings';
import { expectedOutcome, keyEvent, typicalEvent } from './bench-events';
import { progress } from './format';
import { measureWarm, type WarmResult } from './warm';

export interface RouteWarmResult {
  readonly fn: WarmResult;
  readonly floor: WarmResult;
  /** The same route answering 401 without touching DynamoDB: a line of the bill. */
  readonly anonymous: WarmResult;
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
  readonly warm: ReadonlyMap<FunctionName, RouteWarmResult>;
  /** By stage name: each stage's log level changes what the authorizer writes. */
  readonly authorizer: ReadonlyMap<string, AuthorizerWarmResult>;
}

/** Warm requests of each route function interleaved with its floor in one process, then the authorizer at each stage's log level. */
export async function measureWarmRequests(bench: BenchSetup, settings: BenchSettings): Promise<WarmRequestResults> {
  const warm = new Map<FunctionName, RouteWarmResult>();
  for (const name of ROUTE_FUNCTIONS) {
    progress(`warm: ${name} and its floor`);
    const asset = bench.productionAssets.get(name)!;
    const env = asset.environment(bench.local);
    const event = typicalEvent(name, bench.requests) as ReturnType<typeof httpEvent>;
    const anonymousEvent = { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: { outcome: 'missing' } } } };
    const [fn, floor, anonymous] = await measureWarm(
      bench.node,
      [
        { label: name, taskRoot: asset.taskRoot, env, events: [event] },
        { label: `${name} floor`, taskRoot: bench.floorOf(name), env, events: [event] },
        { label: `${name} anonymous`, taskRoot: asset.taskRoot, env, events: [anonymousEvent] },
      ],
      settings.warm,
    );
    expectOnly(fn!, expectedOutcome(name));
    expectOnly(anonymous!, 401);
    warm.set(name, { fn: fn!, floor: floor!, anonymous: anonymous! });
  }

  const authorizer = new Map<string, AuthorizerWarmResult>();
  for (const stage of stages) {
    progress(`warm: the authorizer of ${stage.name} (log level ${stage.logLevel})`);
    const asset = bench.assets.get(stage.name)!.get('authorizer')!;
    const env = asset.environment(bench.local);
    const fresh = (await bench.issueKeys(settings.warm.warmup + settings.warm.rounds * settings.warm.batch)).map(keyEvent);
    const [cached, uncached, missing, floor] = await measureWarm(
      bench.node,
      [
        { label: 'cached key', taskRoot: asset.taskRoot, env, events: [keyEvent(bench.requests.apiKey)] },
        { label: 'new key', taskRoot: asset.taskRoot, env, events: fresh },
        { label: 'no key', taskRoot: asset.taskRoot, env, events: [authorizerEvent()] },
        { label: 'floor', taskRoot: bench.floorOf('authorizer'), env, events: fresh },
      ],
      settings.warm,
    );
    expectOnly(cached!, 'allowed');
    expectOnly(uncached!, 'allowed');
    expectOnly(missing!, 'missing');
    authorizer.set(stage.name, { cached: cached!, uncached: uncached!, missing: missing!, floor: floor! });
  }
  return { warm, authorizer };
}

/** A benchmark of error answers would measure the wrong path: every request must have been answered as intended. */
function expectOnly(result: WarmResult, outcome: number | string): void {
  const answered = Object.keys(result.statuses);
  if (answered.length !== 1 || answered[0] !== String(outcome)) {
    throw new Error(`${result.label} was answered ${JSON.stringify(result.statuses)}, not only ${outcome}`);
  }
}
