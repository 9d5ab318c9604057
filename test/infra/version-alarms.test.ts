import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { production, staging, type AlarmThresholds } from '../../infra/stages';
import { answerStatusesOf, VersionAlarms } from '../../infra/version-alarms';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { evaluateExpression } from '../helpers/alarm-evaluation';

/** The construct on a bare stack, judging stand-ins for getPet, routeNotFound and the authorizer, each at `version`. */
function build(thresholds: AlarmThresholds = production.alarms, version = '7') {
  const stack = new Stack(new App(), 'Bare');
  const standIn = (name: string) =>
    new LambdaFunction(stack, name, {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('exports.handler=()=>{}'),
    });
  const judged = (['getPet', 'routeNotFound', 'authorizer'] as const).map((name) => [name, { function: standIn(name), version }] as const);
  const alarms = new VersionAlarms(stack, 'VersionAlarms', {
    functions: new Map<ApiFunctionName, { function: LambdaFunction; version: string }>(judged),
    thresholds,
    metricsNamespace: 'AnimalStore/test',
    accessLogs: new LogGroup(stack, 'AccessLogs'),
    alarmActions: [],
  });
  return { alarms, json: Template.fromStack(stack).toJSON() as { Resources: Record<string, { Type: string; Properties: any }> } };
}

/** Each alarm's math, by its id: what it returns, and the metrics it reads by id. */
function alarmsOf(json: ReturnType<typeof build>['json']) {
  return new Map(
    Object.entries(json.Resources)
      .filter(([, resource]) => resource.Type === 'AWS::CloudWatch::Alarm')
      .map(([id, resource]) => {
        const queries = resource.Properties.Metrics as Array<{
          Id: string;
          Expression?: string;
          MetricStat?: { Metric: any; Stat: string };
        }>;
        const returned = queries.find((query) => query.Expression !== undefined)!;
        const metrics = new Map(queries.filter((query) => query.MetricStat).map((query) => [query.Id, query.MetricStat!]));
        return [id, { expression: returned.Expression!, metrics, threshold: resource.Properties.Threshold as number }] as const;
      }),
  );
}

/** One minute of an alarm: its value given each metric's point, a missing one as CloudWatch leaves it out. */
function minuteValue(alarm: { expression: string }, points: Record<string, number | undefined>): number | undefined {
  return evaluateExpression(alarm.expression, (id) => points[id]);
}

describe('the VersionAlarms construct', () => {
  it('judges each function on its failures, its latency and each refusal it can give besides its success', () => {
    const ids = [...alarmsOf(build().json).keys()];
    const of = (name: string) =>
      ids
        .filter((id) => id.startsWith(`VersionAlarms${name}NewVersion`))
        .map((id) => id.replace(/^VersionAlarms\w+?NewVersion|[0-9A-F]{8}$/g, ''));
    expect(of('getPet').sort()).toEqual(['400', '401', '404', '503', 'Failures', 'Latency']);
    expect(of('routeNotFound').sort()).toEqual(['401', '503', 'Failures', 'Latency']);
    expect(of('authorizer').sort()).toEqual(['401', '503', 'Failures', 'Latency']);
    expect(answerStatusesOf('createPet').sort()).toEqual([400, 401, 503]);
  });

  it("reads the new version's own counts by its version, beside the alias's and the answers of every version", () => {
    const alarms = alarmsOf(build().json);
    const [, notFound] = [...alarms].find(([id]) => id.startsWith('VersionAlarmsgetPetNewVersion404'))!;
    const dimensions = (id: string) =>
      Object.fromEntries(
        (notFound.metrics.get(id)!.Metric.Dimensions as Array<{ Name: string; Value: unknown }>).map((d) => [d.Name, d.Value]),
      );
    expect(dimensions('newN')).toEqual({ FunctionName: expect.anything(), Resource: expect.anything(), ExecutedVersion: '7' });
    expect(JSON.stringify(dimensions('allN').Resource)).toContain(':live');
    expect(dimensions('allN')).not.toHaveProperty('ExecutedVersion');
    expect(dimensions('newBad')).toEqual(expect.objectContaining({ status: '404', version: '7' }));
    expect(dimensions('allBad')).not.toHaveProperty('version');
  });

  it("counts the authorizer's refused and unlooked-up keys from the access log, by the version in its verdict", () => {
    const { json } = build();
    const filters = Object.values(json.Resources).filter((resource) => resource.Type === 'AWS::Logs::MetricFilter');
    expect(filters.map((filter) => filter.Properties.FilterPattern)).toEqual([
      '{ ($.authorizerOutcome = "invalid") || ($.authorizerOutcome = "unavailable") }',
      '{ ($.authorizerOutcome = "invalid") || ($.authorizerOutcome = "unavailable") }',
    ]);
    expect(filters.map((filter) => filter.Properties.MetricTransformations[0].Dimensions)).toEqual([
      [{ Key: 'status', Value: '$.status' }],
      [
        { Key: 'status', Value: '$.status' },
        { Key: 'version', Value: '$.authorizerVersion' },
      ],
    ]);
  });

  it('names each alarm for the version it judges, so a release brings new alarms without the state of the version serving', () => {
    const namesOf = (version: string) =>
      Object.values(build(production.alarms, version).json.Resources)
        .filter((resource) => resource.Type === 'AWS::CloudWatch::Alarm')
        .map((resource) => JSON.stringify(resource.Properties.AlarmName));
    const [seven, eight] = [namesOf('7'), namesOf('8')];
    expect(seven.every((name) => name.includes('-v7'))).toBe(true);
    expect(eight.filter((name) => seven.includes(name))).toEqual([]);
  });

  it('refuses thresholds the deployment traffic cannot give an idle stage’s canary', () => {
    expect(() => build({ ...staging.alarms, newVersion: { ...staging.alarms.newVersion, minimumRequests: 100 } })).toThrow(
      /twice newVersion.minimumRequests \(100\)/,
    );
  });
});

describe('a new version judged against its old one over the same minute (production)', () => {
  const alarms = alarmsOf(build().json);
  const alarm = (name: string) => [...alarms].find(([id]) => id.startsWith(`VersionAlarms${name}`))![1];
  const breaches = (name: string, points: Record<string, number | undefined>) => minuteValue(alarm(name), points)! >= alarm(name).threshold;

  it('rolls back a canary answering 404 to every read its old version answers 200', () => {
    expect(breaches('getPetNewVersion404', { newN: 24, allN: 240, newBad: 24, allBad: 24 })).toBe(true);
  });

  it('rolls nothing back when both versions answer 404 alike, as to a client asking for pets that were never stored', () => {
    expect(breaches('getPetNewVersion404', { newN: 24, allN: 240, newBad: 12, allBad: 120 })).toBe(false);
  });

  it('leaves a handful of stray answers alone, however large their share of a small minute', () => {
    expect(breaches('getPetNewVersion400', { newN: 10, allN: 240, newBad: 4, allBad: 4 })).toBe(false);
  });

  it('judges no 404 while the old version serves too few to compare with, as in the bake', () => {
    expect(minuteValue(alarm('getPetNewVersion404'), { newN: 240, allN: 240, newBad: 240, allBad: 240 })).toBe(0);
  });

  it('holds a route to no 401 at all in the bake: no version refuses a key the authorizer accepted', () => {
    expect(breaches('getPetNewVersion401', { newN: 240, allN: 240, newBad: 6, allBad: 6 })).toBe(true);
    expect(breaches('getPetNewVersion401', { newN: 240, allN: 240, newBad: 0, allBad: 0 })).toBe(false);
  });

  it('rolls back failures in the bake on a rate no healthy stage has, and leaves one the old version lived with', () => {
    const bake = (failures: number) => ({ newN: 240, allN: 240, newErrors: 0, allErrors: 0, new500: failures, all500: failures });
    // Production's bakeFailurePercent is 5: 30 of 240 is 12.5 %, 5 of 240 about 2 %.
    expect(breaches('getPetNewVersionFailures', bake(30))).toBe(true);
    expect(breaches('getPetNewVersionFailures', bake(5))).toBe(false);
  });

  it('rolls nothing back when the old version fails as often: a store down for both', () => {
    const points = { newN: 24, allN: 240, newErrors: 0, allErrors: 0, new500: 24, all500: 240 };
    expect(breaches('getPetNewVersionFailures', points)).toBe(false);
  });

  it('rolls back a version twice as slow as the old one, and holds a slow old version against nobody', () => {
    expect(breaches('getPetNewVersionLatency', { newN: 24, allN: 240, newDuration: 24 * 200, allDuration: 24 * 200 + 216 * 20 })).toBe(
      true,
    );
    expect(breaches('getPetNewVersionLatency', { newN: 24, allN: 240, newDuration: 24 * 20, allDuration: 24 * 20 + 216 * 900 })).toBe(
      false,
    );
  });

  it('has nothing to judge in a minute the new version did not run', () => {
    expect(minuteValue(alarm('getPetNewVersionFailures'), { newN: undefined, allN: 240, allErrors: 3, all500: 5 })).toBeUndefined();
  });
});
