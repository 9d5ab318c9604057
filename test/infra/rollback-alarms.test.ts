import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern } from 'aws-cdk-lib/aws-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMERGENCY_ARGUMENT } from '../../infra/animal-store-app';
import { production, stages, throttledRoutes, type StageConfig } from '../../infra/stages';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { OPERATION_IDS } from '../../shared/facts/routes';
import { resourcesOfType, synthesize, type CfnTemplate, type Synthesis } from '../../tools/lambda/synth';
import { synthArguments } from '../../tools/release';
import {
  evaluateExpression,
  parseFilterPattern,
  StageAlarms,
  type Canary,
  type Caller,
  type Minute,
  type MinuteVerdict,
  type Traffic,
} from '../helpers/alarm-evaluation';
import { synthesizedStage } from '../helpers/synthesized-app';

/** Minutes each scenario lasts: within a canary's five, and enough for a 2-of-3 alarm to fire. */
const MINUTES = 3;
/** CodeDeploy's canary share (CANARY_10PERCENT_5MINUTES). */
const CANARY_SHARE = 0.1;

/** Clients with valid keys on every operation's route, at this fraction of its share of the throttle. */
function clients(stage: StageConfig, fraction: number): Traffic[] {
  return OPERATION_IDS.map((route) => ({ route, perSecond: stage.throttle[route].rateLimit * fraction, caller: 'valid key' as const }));
}

/** A caller without a valid key on `$default`, the route every garbage path reaches, at its whole share. */
function onDefaultRoute(stage: StageConfig, caller: Caller): Traffic {
  return { route: 'routeNotFound', perSecond: stage.throttle.routeNotFound.rateLimit, caller };
}

interface Scenario {
  readonly name: string;
  readonly minute: (stage: StageConfig) => Minute;
  /** What the gates must do: roll nothing back, or roll back the deployment of this function. */
  readonly expected: { readonly rollsBack: 'nothing' } | { readonly rollsBack: ApiFunctionName; readonly by?: 'the pre-traffic hook' };
}

const canary = (fn: ApiFunctionName, regression: Canary['regression']): Canary => ({ function: fn, share: CANARY_SHARE, regression });

/** What no caller without a valid key, nor a client holding a revoked one, may turn into a rollback. */
const HARMLESS: readonly Scenario[] = [
  {
    name: 'an anonymous flood without a header, at twice every route’s share, on an idle stage',
    minute: (stage) => ({
      traffic: throttledRoutes(stage).map((route) => ({ route, perSecond: 2 * stage.throttle[route].rateLimit, caller: 'no key' })),
    }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'malformed tokens on $default at its share, on an idle stage',
    minute: (stage) => ({ traffic: [onDefaultRoute(stage, 'malformed key')] }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'unknown well-formed tokens on $default at its share, beside clients at every operation’s whole share',
    minute: (stage) => ({ traffic: [...clients(stage, 1), onDefaultRoute(stage, 'unknown key')] }),
    expected: { rollsBack: 'nothing' },
  },
  {
    name: 'a client polling listPets with a revoked key at a tenth of the clients’ rate, beside clients at half every share',
    minute: (stage) => {
      const traffic = clients(stage, 0.5);
      const rate = traffic.reduce((sum, t) => sum + t.perSecond, 0) / 10;
      return { traffic: [...traffic, { route: 'listPets', perSecond: rate, caller: 'revoked key' }] };
    },
    expected: { rollsBack: 'nothing' },
  },
];

/** What the gates must still catch, clients at half every share while a canary serves 10 % of its function's requests. */
const REGRESSIONS: readonly Scenario[] = [
  {
    name: 'the authorizer’s canary refuses valid keys',
    minute: (stage) => ({ traffic: clients(stage, 0.5), canary: canary('authorizer', 'refuses valid keys') }),
    // Its rollback is the hook's check, which invokes the new version with a key it issued; the alarms only notify.
    expected: { rollsBack: 'authorizer', by: 'the pre-traffic hook' },
  },
  {
    name: 'getPet’s canary refuses keys the authorizer accepted',
    minute: (stage) => ({ traffic: clients(stage, 0.5), canary: canary('getPet', 'refuses accepted keys') }),
    expected: { rollsBack: 'getPet' },
  },
  {
    name: 'createPet’s canary crashes on every request it serves (a 5xx rate)',
    minute: (stage) => ({ traffic: clients(stage, 0.5), canary: canary('createPet', 'crashes') }),
    expected: { rollsBack: 'createPet' },
  },
];

/** How a scenario's minutes fall short of its expectation; empty when they meet it. */
function misses(scenario: Scenario, verdicts: readonly MinuteVerdict[]): string[] {
  const fired = [...new Map(verdicts.flatMap((v) => v.inAlarm).map((alarm) => [alarm.id, alarm])).values()];
  const rollingBack = fired.filter((alarm) => alarm.rollsBack.length > 0);
  const { expected } = scenario;
  if (expected.rollsBack === 'nothing') return rollingBack.map((alarm) => `rolled back by ${alarm.label}`);
  if (expected.by === 'the pre-traffic hook') {
    // A refusal storm still reaches a person, through an alarm that rolls nothing back.
    const notifies = fired.some((alarm) => alarm.rollsBack.length === 0);
    return [...rollingBack.map((alarm) => `rolled back by ${alarm.label}`), ...(notifies ? [] : ['no alarm that only notifies fires'])];
  }
  return rollingBack.some((alarm) => alarm.rollsBack.includes(expected.rollsBack)) ? [] : [`no alarm rolls back ${expected.rollsBack}`];
}

/** The minutes as a table, for a failure's message: each alarm that breached, marked ALARM once it fires. */
function table(verdicts: readonly MinuteVerdict[]): string {
  return verdicts
    .map(({ minute, breaching, inAlarm, rollingBack }) => {
      const alarms = breaching.map(
        (alarm) => `${alarm.label}${inAlarm.includes(alarm) ? ' (ALARM)' : ''}${alarm.rollsBack.length ? ' [rollback]' : ''}`,
      );
      return `  minute ${minute}: ${alarms.join(', ') || 'nothing breaches'}${rollingBack.length ? `; rolls back ${rollingBack.join(', ')}` : ''}`;
    })
    .join('\n');
}

describe.each(stages)('the alarms of the $name stage, over simulated minutes of its access log', (config: StageConfig) => {
  let alarms: StageAlarms;
  beforeAll(() => {
    alarms = new StageAlarms(synthesizedStage(config.name).json);
  });

  /** The same minute MINUTES times over, and what every alarm made of each. */
  const run = (minute: Minute) =>
    alarms.evaluate(
      alarms.simulate(
        config,
        Array.from({ length: MINUTES }, () => minute),
      ),
    );

  it('knows every alarm, and which of them roll back which deployments', () => {
    const rollback = alarms.alarms.filter((alarm) => alarm.rollsBack.length > 0);
    expect(rollback.length).toBeGreaterThan(0);
    expect(new Set(rollback.flatMap((alarm) => alarm.rollsBack))).toEqual(new Set([...OPERATION_IDS, 'routeNotFound', 'authorizer']));
    expect(alarms.alarms.length).toBeGreaterThan(rollback.length);
  });

  it('lets clients with valid keys at every route’s whole share breach no alarm', () => {
    const verdicts = run({ traffic: clients(config, 1) });
    expect(verdicts.flatMap((v) => v.breaching.map((alarm) => alarm.label))).toEqual([]);
  });

  it('stops every deployment while an incident the release did not cause fires the API’s alarms, so a rollback needs another path', () => {
    const verdicts = run({ traffic: clients(config, 0.5), keysTableDown: true });
    expect(new Set(verdicts.at(-1)!.rollingBack), table(verdicts)).toEqual(new Set([...OPERATION_IDS, 'routeNotFound', 'authorizer']));
  });

  it.each([...HARMLESS, ...REGRESSIONS])('$name: the gates do what they must', (scenario) => {
    const verdicts = run(scenario.minute(config));
    expect(misses(scenario, verdicts), `${scenario.name}\n${table(verdicts)}`).toEqual([]);
  });
});

describe('the alarm evaluation itself', () => {
  it('reads the JSON filter patterns CDK writes: &&, ||, !=, wildcards, numbers', () => {
    const keyed = parseFilterPattern(
      FilterPattern.all(
        FilterPattern.stringValue('$.status', '=', '401'),
        FilterPattern.stringValue('$.authorizerOutcome', '!=', 'missing'),
      ).logPatternString,
    );
    expect(keyed({ status: '401', authorizerOutcome: 'invalid' })).toBe(true);
    expect(keyed({ status: '401', authorizerOutcome: 'missing' })).toBe(false);
    expect(keyed({ status: '429', authorizerOutcome: '-' })).toBe(false);
    expect(keyed({ status: '401' })).toBe(false);

    const either = parseFilterPattern(
      FilterPattern.any(FilterPattern.stringValue('$.status', '=', '5*'), FilterPattern.numberValue('$.latency', '>=', 1000))
        .logPatternString,
    );
    expect([
      either({ status: '503', latency: 1 }),
      either({ status: '200', latency: 1000 }),
      either({ status: '200', latency: 999 }),
    ]).toEqual([true, true, false]);
    // The access log writes every field as a string: comparing one as a number is refused, not guessed.
    expect(() => parseFilterPattern('{ $.status = 401 }')({ status: '401' })).toThrow(/as a number/);
  });

  it('does metric math one period at a time: FILL, IF, comparisons, and a missing point making the result missing', () => {
    const values: Record<string, number | undefined> = { requests: 40, refused: undefined, none: undefined };
    const at = (expression: string) => evaluateExpression(expression, (id) => values[id]);
    expect(at('IF(requests >= 20, 100 * FILL(refused, 0) / requests, 0)')).toBe(0);
    expect(at('100 * refused / requests')).toBeUndefined();
    expect(at('IF(requests >= 50, 1, 0) + IF(requests > 20 AND requests < 50, 2, 0)')).toBe(2);
    expect(at('requests / FILL(none, 0)')).toBeUndefined();
    expect(() => at('RATE(requests)')).toThrow(/not simulated/);
  });

  it('fires an alarm when M of its last N minutes breach, counting a missing minute as its TreatMissingData says', () => {
    const stack = new Stack();
    const metric = new Metric({ namespace: 'Test', metricName: 'Value', statistic: 'Sum', period: Duration.minutes(1) });
    for (const [id, treatMissingData] of [
      ['Quiet', TreatMissingData.NOT_BREACHING],
      ['Loud', TreatMissingData.BREACHING],
    ] as const) {
      new Alarm(stack, id, {
        metric,
        threshold: 5,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 3,
        datapointsToAlarm: 2,
        treatMissingData,
      });
    }
    // A bare stack has no API: give the evaluation one, with an access log, as the stages have.
    const template = Template.fromStack(stack).toJSON() as CfnTemplate;
    const json: CfnTemplate = {
      Resources: {
        ...template.Resources,
        Api: { Type: 'AWS::ApiGatewayV2::Api' },
        Stage: {
          Type: 'AWS::ApiGatewayV2::Stage',
          Properties: { AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': ['Logs', 'Arn'] }, Format: '{"status":"$context.status"}' } },
        },
      },
    };
    const evaluation = new StageAlarms(json);
    const values = [5, undefined, 5, undefined, undefined, undefined];
    const verdicts = evaluation.evaluate(
      values.map(() => ({ requests: [], invocations: new Map() })),
      (_, minute) => values[minute],
    );
    const states = (id: string) => verdicts.map((v) => v.inAlarm.some((alarm) => alarm.id.startsWith(id)));
    expect(states('Quiet')).toEqual([false, false, true, false, false, false]);
    expect(states('Loud')).toEqual([false, true, true, true, true, true]);
  });
});

describe('an emergency release (npm run release -- --emergency)', () => {
  let emergency: Synthesis;
  beforeAll(() => {
    // Bundles do not matter to deployment groups.
    emergency = synthesize({ stages: [production], emergency: true, context: { 'aws:cdk:bundling-stacks': [] } });
  });
  afterAll(() => emergency?.dispose());

  it('moves every function at once with CodeDeploy polling no alarm, keeping each group’s alarms and the pre-traffic hook', () => {
    const { json } = emergency.stage(production.name);
    const ordinary = synthesizedStage(production.name).json;
    const groups = (template: CfnTemplate) => resourcesOfType(template, 'AWS::CodeDeploy::DeploymentGroup');
    expect(Object.keys(groups(json)).sort()).toEqual(Object.keys(groups(ordinary)).sort());
    for (const [id, group] of Object.entries(groups(json))) {
      expect(group.Properties!.DeploymentConfigName, id).toBe('CodeDeployDefault.LambdaAllAtOnce');
      expect(group.Properties!.AlarmConfiguration.Enabled, id).toBe(false);
      expect(group.Properties!.AlarmConfiguration.Alarms, id).toEqual(groups(ordinary)[id]!.Properties!.AlarmConfiguration.Alarms);
    }
    for (const [id, alias] of Object.entries(resourcesOfType(json, 'AWS::Lambda::Alias'))) {
      expect((alias as { UpdatePolicy?: any }).UpdatePolicy?.CodeDeployLambdaAliasUpdate?.BeforeAllowTrafficHook, id).toBeDefined();
    }
  });

  it('deploys through an incident that fires the API’s alarms, where an ordinary release is stopped', () => {
    const incident = Array.from({ length: MINUTES }, () => ({ traffic: clients(production, 0.5), keysTableDown: true }));
    const ordinary = new StageAlarms(synthesizedStage(production.name).json);
    expect(ordinary.evaluate(ordinary.simulate(production, incident)).at(-1)!.rollingBack.length).toBeGreaterThan(0);
    const alarms = new StageAlarms(emergency.stage(production.name).json);
    const verdicts = alarms.evaluate(alarms.simulate(production, incident));
    expect(verdicts.at(-1)!.inAlarm.length, table(verdicts)).toBeGreaterThan(0);
    expect(verdicts.at(-1)!.rollingBack, table(verdicts)).toEqual([]);
  });

  it('is what npm run release -- --emergency synthesizes, and an ordinary release is not', () => {
    expect(synthArguments('out', true, 'npx tsx infra/app.ts')).toEqual(
      expect.arrayContaining(['--app', `npx tsx infra/app.ts ${EMERGENCY_ARGUMENT}`]),
    );
    expect(synthArguments('out', false, 'npx tsx infra/app.ts').join(' ')).not.toContain(EMERGENCY_ARGUMENT);
  });
});
