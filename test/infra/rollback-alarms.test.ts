import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { FilterPattern } from 'aws-cdk-lib/aws-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMERGENCY_ARGUMENT } from '../../infra/animal-store-app';
import { production, stages, type StageConfig } from '../../infra/stages';
import { API_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';
import { resourcesOfType, synthesize, type CfnTemplate, type Synthesis } from '../../tools/lambda/synth';
import { synthArguments } from '../../tools/release';
import {
  DEPLOYMENT_REQUESTS_PER_MINUTE,
  emfDataPoints,
  evaluateExpression,
  NOTHING_PUBLISHED,
  parseFilterPattern,
  StageAlarms,
  VERSIONS,
  type BundleSignals,
  type DeploymentOutcome,
  type Minute,
} from '../helpers/alarm-evaluation';
import { bundleSignals } from '../helpers/bundle-signals';
import { clients, misses, PROBE, SCENARIOS, type Scenario } from '../helpers/rollback-scenarios';
import { synthesizedApp, synthesizedStage } from '../helpers/synthesized-app';

/** Each stage's per-version signals, from its bundles: seconds of processes, so run once per stage for the whole file. */
const signalsByStage = new Map<string, Promise<BundleSignals>>();
function signalsOf(config: StageConfig): Promise<BundleSignals> {
  let signals = signalsByStage.get(config.name);
  if (signals === undefined) {
    const stage = synthesizedStage(config.name);
    signals = bundleSignals(synthesizedApp(), stage, new StageAlarms(stage.json).functionNames());
    signalsByStage.set(config.name, signals);
  }
  return signals;
}

/** The deployment minute by minute, for a failure's message: each rollback alarm of its group, with the requests each version served. */
function minuteTable(alarms: StageAlarms, fn: ApiFunctionName, outcome: DeploymentOutcome): string {
  const own = alarms.alarms.filter((alarm) => alarm.rollsBack.includes(fn));
  const short = (label: string) => label.split('/').at(-1)!;
  const shown = (value: number | undefined) => (value === undefined ? 'no data' : String(Math.round(value * 100) / 100));
  return outcome.verdicts
    .map((verdict, index) => {
      const runs = outcome.simulated[index]!.lambda.get(fn);
      const served = Object.entries(VERSIONS)
        .map(([role, version]) => `${role} ${runs?.get(version)?.invocations ?? 0}`)
        .join(', ');
      const values = own.map(
        (alarm) => `${short(alarm.label)} ${shown(verdict.values.get(alarm.id))}${verdict.inAlarm.includes(alarm) ? ' ALARM' : ''}`,
      );
      const others = verdict.inAlarm.filter((alarm) => !own.includes(alarm)).map((alarm) => short(alarm.label));
      const phase = outcome.minutes[index]!.deployment?.phase ?? 'no deployment';
      return `  minute ${verdict.minute} (${phase}; ${fn} served ${served}): ${values.join(', ')}${others.length ? `; also in ALARM: ${others.join(', ')}` : ''}`;
    })
    .join('\n');
}

describe.each(stages)('the rollback alarms of the $name stage, over simulated minutes', (config: StageConfig) => {
  let alarms: StageAlarms;
  let signals: BundleSignals;
  beforeAll(async () => {
    alarms = new StageAlarms(synthesizedStage(config.name).json);
    signals = await signalsOf(config);
  });

  it('roll back each function’s deployment only by alarms on its own new version, never by an API-wide one', () => {
    const rollback = alarms.alarms.filter((alarm) => alarm.rollsBack.length > 0);
    expect(new Set(rollback.flatMap((alarm) => alarm.rollsBack))).toEqual(new Set(API_FUNCTIONS));
    for (const alarm of rollback) {
      expect(alarm.rollsBack, alarm.label).toHaveLength(1);
      expect(alarm.label, alarm.label).toContain(`${alarm.rollsBack[0]}NewVersion`);
    }
    expect(alarms.alarms.filter((alarm) => alarm.label.startsWith('Monitoring/') && alarm.rollsBack.length > 0)).toEqual([]);
  });

  it('count each version’s answers from the lines its bundle wrote, under the dimensions the alarms read', () => {
    const outcome = alarms.deploy(
      config,
      { function: 'getPet', traffic: clients(config, 0.5), newVersion: 'answers 404 for existing pets' },
      signals,
    );
    const answers = outcome.simulated[0]!.dataPoints.filter((point) => point.metricName === 'Answers' && point.dimensions.status === '404');
    const byVersion = (version: string) => answers.find((point) => point.dimensions.version === version)?.count ?? 0;
    expect(byVersion(VERSIONS.new)).toBeGreaterThan(0);
    // The healthy old version finds every pet: its lines are none, and the count without `version` is the new one's.
    expect(byVersion(VERSIONS.old)).toBe(0);
    expect(answers.find((point) => point.dimensions.version === undefined)?.count).toBe(byVersion(VERSIONS.new));
    expect(answers.every((point) => point.dimensions.function_name === alarms.functionNames().getPet)).toBe(true);
    const alarm = alarms.alarms.find((a) => a.label.endsWith('getPetNewVersion404'))!;
    expect(outcome.verdicts[0]!.values.get(alarm.id), minuteTable(alarms, 'getPet', outcome)).toBeGreaterThan(0);
  });

  it('carry the authorizer version that gave each verdict into the access log, as its bundle answered it', () => {
    const outcome = alarms.deploy(config, { function: 'authorizer', traffic: clients(config, 0.5, 'unknown key') }, signals);
    const versions = new Set(outcome.simulated[0]!.requests.map(({ line }) => line.authorizerVersion));
    expect(versions).toEqual(new Set([VERSIONS.new, VERSIONS.old]));
  });

  it('count the authorizer’s verdicts on the deployment’s own requests from the lines the deployment traffic writes, by version', () => {
    const outcome = alarms.deploy(config, { function: 'authorizer', traffic: PROBE }, signals);
    const refusals = outcome.simulated[0]!.dataPoints.filter(
      (point) => point.metricName === 'AuthorizerAnswers' && point.dimensions.status === '401' && point.dimensions.version !== undefined,
    );
    // Half the deployment's requests carry an unknown key, each version refusing its share of them.
    expect(new Set(refusals.map((point) => point.dimensions.version))).toEqual(new Set([VERSIONS.new, VERSIONS.old]));
    expect(refusals.reduce((sum, point) => sum + point.count, 0)).toBe(DEPLOYMENT_REQUESTS_PER_MINUTE / 2);
  });

  it.each(API_FUNCTIONS)('let clients at every route’s whole share breach no alarm while %s deploys a healthy version', (fn) => {
    const outcome = alarms.deploy(config, { function: fn, traffic: clients(config, 1) }, signals);
    expect(outcome.verdicts.flatMap((verdict) => verdict.breaching.map((alarm) => alarm.label))).toEqual([]);
  });

  it('stop no deployment while an incident it did not cause fires the API’s alarms: they page and roll nothing back', () => {
    const outcome = alarms.deploy(config, { function: 'getPet', traffic: clients(config, 0.5), keysTableDown: true }, signals);
    expect(
      outcome.verdicts.at(-1)!.inAlarm.map((alarm) => alarm.label),
      minuteTable(alarms, 'getPet', outcome),
    ).toContain('Monitoring/ApiServerErrorRate');
    expect(outcome.verdicts.flatMap((verdict) => verdict.rollingBack)).toEqual([]);
  });

  const check = (scenario: Scenario) => {
    const plan = scenario.plan(config);
    const outcome = alarms.deploy(config, plan, signals);
    expect(misses(scenario.expected, outcome, plan.function), `${scenario.name}\n${minuteTable(alarms, plan.function, outcome)}`).toEqual(
      [],
    );
  };
  for (const scenario of SCENARIOS) {
    // A known miss still states what must happen: it runs as failing, and turns red the day the gate no longer misses it.
    if (scenario.knownMiss?.stages.includes(config.name))
      it.fails(`${scenario.name}: the gate misses it (${scenario.knownMiss.why})`, () => check(scenario));
    else it(`${scenario.name}: the gate does what it must`, () => check(scenario));
  }
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

  it('reads an EMF line as every dimension set of each directive times each of its metrics', () => {
    const line = JSON.stringify({
      _aws: {
        Timestamp: 0,
        CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['a'], ['a', 'b']], Metrics: [{ Name: 'X' }, { Name: 'Y' }] }],
      },
      a: 'one',
      b: 2,
      X: 1,
      Y: 5,
    });
    expect(emfDataPoints(line)).toEqual([
      { namespace: 'N', metricName: 'X', dimensions: { a: 'one' }, value: 1 },
      { namespace: 'N', metricName: 'Y', dimensions: { a: 'one' }, value: 5 },
      { namespace: 'N', metricName: 'X', dimensions: { a: 'one', b: '2' }, value: 1 },
      { namespace: 'N', metricName: 'Y', dimensions: { a: 'one', b: '2' }, value: 5 },
    ]);
    expect(emfDataPoints('{"level":"INFO","message":"not a metric"}')).toEqual([]);
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
      values.map(() => NOTHING_PUBLISHED),
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

  it('moves every function at once with CodeDeploy polling no alarm, keeping each group’s alarms and both hooks', () => {
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
      const update = (alias as { UpdatePolicy?: any }).UpdatePolicy?.CodeDeployLambdaAliasUpdate;
      expect(update?.BeforeAllowTrafficHook, id).toBeDefined();
      expect(update?.AfterAllowTrafficHook, id).toBeDefined();
    }
  });

  it('lets a new version through whose own alarms fire, where an ordinary release rolls it back', async () => {
    const signals = await signalsOf(production);
    // All at once: from its first minute the new version serves every request.
    const shifted: Minute[] = Array.from({ length: 3 }, () => ({
      traffic: clients(production, 0.5),
      deployment: { function: 'getPet', phase: 'bake', newVersion: 'crashes', deploymentTraffic: false },
    }));
    const ordinary = new StageAlarms(synthesizedStage(production.name).json);
    expect(ordinary.evaluate(ordinary.simulate(production, shifted, signals)).at(-1)!.rollingBack).toEqual(['getPet']);
    const alarms = new StageAlarms(emergency.stage(production.name).json);
    const verdicts = alarms.evaluate(alarms.simulate(production, shifted, signals));
    expect(verdicts.at(-1)!.inAlarm.map((alarm) => alarm.label)).toContain('VersionAlarms/getPetNewVersionFailures');
    expect(verdicts.at(-1)!.rollingBack).toEqual([]);
  });

  it('is what npm run release -- --emergency synthesizes, and an ordinary release is not', () => {
    expect(synthArguments('out', true, 'npx tsx infra/app.ts')).toEqual(
      expect.arrayContaining(['--app', `npx tsx infra/app.ts ${EMERGENCY_ARGUMENT}`]),
    );
    expect(synthArguments('out', false, 'npx tsx infra/app.ts').join(' ')).not.toContain(EMERGENCY_ARGUMENT);
  });
});
