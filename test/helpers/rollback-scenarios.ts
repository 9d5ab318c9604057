import { throttledRoutes, type StageConfig } from '../../infra/stages';
import { ROUTE_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';
import { OPERATION_IDS } from '../../shared/facts/routes';
import type { Behaviour, Caller, DeploymentOutcome, DeploymentPlan, Traffic } from './alarm-evaluation';

/**
 * The deployments the rollback alarms are judged on (test/infra/rollback-alarms.test.ts), each with what the gate
 * must do: the old version's faults, faults both versions share, outsiders, and a new version failing on each route,
 * idle or busy, before or after the shift. Kept apart from the test so the same scenarios can be run over other
 * templates to compare.
 */

/** The alarm of a function's group that must roll it back: `<fn>NewVersion<kind>` (infra/version-alarms.ts). */
export type RollbackAlarm = 'Failures' | '503' | '401' | '404' | '400' | 'Latency';

export type Expectation =
  | { readonly rollsBack: 'nothing' }
  /** A broken version the gate cannot see, and why: stated, so the gap is on record rather than assumed closed. */
  | { readonly rollsBack: 'nothing'; readonly unseen: string }
  | { readonly rollsBack: ApiFunctionName; readonly by: RollbackAlarm }
  /** Caught before any traffic by the pre-traffic hook's checks; the alarms cannot see it. */
  | { readonly rollsBack: ApiFunctionName; readonly by: 'the pre-traffic hook' };

export interface Scenario {
  readonly name: string;
  readonly plan: (stage: StageConfig) => DeploymentPlan;
  readonly expected: Expectation;
  /** Where the gate falls short of the expectation today, and why: the expectation stands, the test runs as a known miss. */
  readonly knownMiss?: { readonly stages: readonly StageConfig['name'][]; readonly why: string };
}

/** Why the answer alarms miss a new version that only fails once it takes all traffic. */
const ANSWERS_UNJUDGED_IN_THE_BAKE =
  'the answer alarms judge only while both versions serve their minimum (infra/version-alarms.ts, answersRule): in the bake the old ' +
  'version serves nothing, so no 503, 404 or 400 of the new version is judged (a route’s 401 is, against none)';
/** Clients on every operation's route at this fraction of its share of the throttle; their keys, as `npm run keys` issues them, have no expiry. */
export function clients(stage: StageConfig, fraction: number, caller: Caller = 'valid key'): Traffic[] {
  return OPERATION_IDS.map((route) => ({ route, perSecond: stage.throttle[route].rateLimit * fraction, caller }));
}

/** The synthetic probe's run once a minute (functions/synthetic-probe/probe-run.ts): a list, a read, and a create every version refuses. */
export const PROBE: readonly Traffic[] = [
  { route: 'listPets', perSecond: 1 / 60, caller: 'valid key' },
  { route: 'getPet', perSecond: 1 / 60, caller: 'valid key' },
  { route: 'createPet', perSecond: 1 / 60, caller: 'valid key', refused: 400 },
];

/** Every route at `times` its share, by callers the authorizer refuses. */
function flood(stage: StageConfig, caller: Caller, times: number): Traffic[] {
  return throttledRoutes(stage).map((route) => ({ route, perSecond: times * stage.throttle[route].rateLimit, caller }));
}

/** Clients at half every share: a busy stage. */
const busy = (stage: StageConfig) => clients(stage, 0.5);

const deploys =
  (fn: ApiFunctionName, traffic: (stage: StageConfig) => readonly Traffic[], more: Omit<DeploymentPlan, 'function' | 'traffic'> = {}) =>
  (stage: StageConfig): DeploymentPlan => ({ function: fn, traffic: traffic(stage), ...more });

/** What no caller, no old version and no outage both versions share may turn into a rollback. */
export const HARMLESS: readonly Scenario[] = [
  {
    name: 'an anonymous flood without a header, at twice every route’s share, while the authorizer deploys on an idle stage',
    plan: deploys('authorizer', (stage) => [...PROBE, ...flood(stage, 'no key', 2)]),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'malformed tokens on $default at its share while routeNotFound deploys on an idle stage',
    plan: deploys('routeNotFound', (stage) => [
      ...PROBE,
      { route: 'routeNotFound', perSecond: stage.throttle.routeNotFound.rateLimit, caller: 'malformed key' },
    ]),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'unknown keys on $default at its share, beside clients at every operation’s whole share, while the authorizer deploys',
    plan: deploys('authorizer', (stage) => [
      ...clients(stage, 1),
      { route: 'routeNotFound', perSecond: stage.throttle.routeNotFound.rateLimit, caller: 'unknown key' },
    ]),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'outsiders with unknown keys at every route’s whole share while getPet deploys',
    plan: deploys('getPet', (stage) => flood(stage, 'unknown key', 1)),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'a client polling listPets with a revoked key at a tenth of the clients’ rate while listPets deploys on a busy stage',
    plan: deploys('listPets', (stage) => {
      const traffic = busy(stage);
      const rate = traffic.reduce((sum, t) => sum + t.perSecond, 0) / 10;
      return [...traffic, { route: 'listPets', perSecond: rate, caller: 'revoked key' }];
    }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'getPet’s old version crashes once a minute on an idle stage while getPet deploys',
    plan: deploys('getPet', () => PROBE, { oldVersion: { behaviour: 'crashes', perMinute: 1 } }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'getPet’s old version crashes on 2 % of its requests while getPet deploys on a busy stage',
    plan: deploys('getPet', busy, { oldVersion: { behaviour: 'crashes', share: 0.02 } }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'createPet’s old version answers 500 to 2 % of valid creates while createPet deploys on a busy stage',
    plan: deploys('createPet', busy, { oldVersion: { behaviour: 'answers 500', share: 0.02 } }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'the pets table is down for every version while getPet deploys on a busy stage',
    plan: deploys('getPet', busy, { petsTableDown: true }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'the keys table is down for every version while the authorizer deploys on a busy stage',
    plan: deploys('authorizer', busy, { keysTableDown: true }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'listPets’ old version is slower by a second while listPets deploys on a busy stage',
    plan: deploys('listPets', busy, { oldVersion: 'slow +1 s' }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'both versions of getPet crash on 2 % of requests (a fault they share) while getPet deploys on a busy stage',
    plan: deploys('getPet', busy, { oldVersion: { behaviour: 'crashes', share: 0.02 }, newVersion: { behaviour: 'crashes', share: 0.02 } }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'both versions of getPet are slower by a second (a slow store) while getPet deploys on a busy stage',
    plan: deploys('getPet', busy, { oldVersion: 'slow +1 s', newVersion: 'slow +1 s' }),
    expected: { rollsBack: 'nothing' },
  },
];

/** A route's new version doing `behaviour` to every request it concerns, clients at half every share. */
const onEveryRoute = (behaviour: Behaviour, by: RollbackAlarm): Scenario[] =>
  ROUTE_FUNCTIONS.map((fn) => ({
    name: `${fn.endsWith('s') ? `${fn}’` : `${fn}’s`} new version ${behaviour === 'crashes' ? 'crashes on every request' : 'answers 500 to every valid request'} on a busy stage`,
    plan: deploys(fn, busy, { newVersion: behaviour }),
    expected: { rollsBack: fn, by },
  }));

/** What the gate must catch. */
export const REGRESSIONS: readonly Scenario[] = [
  ...onEveryRoute('crashes', 'Failures'),
  ...onEveryRoute('answers 500', 'Failures'),
  {
    name: 'the authorizer’s new version crashes on every request on a busy stage',
    plan: deploys('authorizer', busy, { newVersion: 'crashes' }),
    expected: { rollsBack: 'authorizer', by: 'Failures' },
  },
  {
    name: 'getPet’s new version answers 404 for pets that exist on a busy stage',
    plan: deploys('getPet', busy, { newVersion: 'answers 404 for existing pets' }),
    expected: { rollsBack: 'getPet', by: '404' },
  },
  {
    name: 'createPet’s new version answers 400 to valid bodies on a busy stage',
    plan: deploys('createPet', busy, { newVersion: 'answers 400 to valid bodies' }),
    expected: { rollsBack: 'createPet', by: '400' },
  },
  {
    name: 'getPet’s new version refuses keys the authorizer accepted on a busy stage',
    plan: deploys('getPet', busy, { newVersion: 'refuses accepted keys' }),
    expected: { rollsBack: 'getPet', by: '401' },
  },
  {
    name: 'getPet’s new version is ten times slower on a busy stage',
    plan: deploys('getPet', busy, { newVersion: 'slow ×10' }),
    expected: { rollsBack: 'getPet', by: 'Latency' },
  },
  {
    name: 'getPet’s new version crashes only once it takes all traffic, on a busy stage',
    plan: deploys('getPet', busy, { newVersion: { afterTheShift: 'crashes' } }),
    expected: { rollsBack: 'getPet', by: 'Failures' },
  },
  {
    name: 'getPet’s new version refuses keys the authorizer accepted only once it takes all traffic, on a busy stage',
    plan: deploys('getPet', busy, { newVersion: { afterTheShift: 'refuses accepted keys' } }),
    expected: { rollsBack: 'getPet', by: '401' },
  },
  {
    name: 'getPet’s new version answers 404 for pets that exist only once it takes all traffic, on a busy stage',
    plan: deploys('getPet', busy, { newVersion: { afterTheShift: 'answers 404 for existing pets' } }),
    expected: { rollsBack: 'getPet', by: '404' },
    knownMiss: { stages: ['staging', 'production'], why: ANSWERS_UNJUDGED_IN_THE_BAKE },
  },
  {
    name: 'getPet’s new version crashes on an idle stage',
    plan: deploys('getPet', () => PROBE, { newVersion: 'crashes' }),
    expected: { rollsBack: 'getPet', by: 'Failures' },
  },
  {
    name: 'routeNotFound’s new version answers 500 to every request on an idle stage',
    plan: deploys('routeNotFound', () => PROBE, { newVersion: 'answers 500' }),
    expected: { rollsBack: 'routeNotFound', by: 'Failures' },
  },
  {
    name: 'createPet’s new version answers 500 to every valid create on an idle stage',
    plan: deploys('createPet', () => PROBE, { newVersion: 'answers 500' }),
    expected: {
      rollsBack: 'nothing',
      unseen:
        'no request of the deployment, the hook or the probe writes (no client may see their pets): the first valid create shows it, after release',
    },
  },
  {
    name: 'the authorizer’s new version refuses keys without an expiry, every client’s, on a busy stage',
    plan: deploys('authorizer', (stage) => [...clients(stage, 0.45), ...clients(stage, 0.05, 'valid key with an expiry')], {
      newVersion: 'refuses keys without an expiry',
    }),
    expected: { rollsBack: 'authorizer', by: '401' },
  },
  {
    name: 'the authorizer’s new version refuses valid keys on an idle stage',
    plan: deploys('authorizer', () => PROBE, { newVersion: 'refuses valid keys' }),
    expected: { rollsBack: 'authorizer', by: 'the pre-traffic hook' },
  },
  {
    name: 'createPet’s new version answers 500 to valid creates while outsiders send 400 keyless requests a second on $default',
    plan: deploys('createPet', (stage) => [...busy(stage), { route: 'routeNotFound', perSecond: 400, caller: 'no key' }], {
      newVersion: 'answers 500',
    }),
    expected: { rollsBack: 'createPet', by: 'Failures' },
  },
  {
    name: 'getPet’s new version answers 404 for pets that exist while outsiders without a key fill its route beside clients at a tenth',
    plan: deploys(
      'getPet',
      (stage) => [...clients(stage, 0.1), { route: 'getPet', perSecond: stage.throttle.getPet.rateLimit, caller: 'no key' }],
      {
        newVersion: 'answers 404 for existing pets',
      },
    ),
    expected: { rollsBack: 'getPet', by: '404' },
  },
  {
    name: 'the authorizer’s new version refuses keys without an expiry while outsiders without a key flood every route at twice its share',
    plan: deploys('authorizer', (stage) => [...busy(stage), ...flood(stage, 'no key', 2)], {
      newVersion: 'refuses keys without an expiry',
    }),
    expected: { rollsBack: 'authorizer', by: '401' },
  },
];

export const SCENARIOS: readonly Scenario[] = [...HARMLESS, ...REGRESSIONS];

/** How a deployment's outcome falls short of a scenario's expectation; empty when it meets it. */
export function misses(expected: Expectation, outcome: DeploymentOutcome, fn: ApiFunctionName): string[] {
  const { rollback } = outcome;
  const rolledBack =
    rollback === undefined ? [] : [`rolled back at minute ${rollback.minute} by ${rollback.alarms.map((a) => a.label).join(', ')}`];
  if (expected.rollsBack === 'nothing' || ('by' in expected && expected.by === 'the pre-traffic hook')) return rolledBack;
  if (rollback === undefined) return [`no alarm rolls back ${fn}`];
  const alarm = `${expected.rollsBack}NewVersion${expected.by}`;
  return rollback.alarms.some((a) => a.label.endsWith(alarm)) ? [] : [`${rolledBack[0]}, not by ${alarm}`];
}
