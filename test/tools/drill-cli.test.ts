import { afterEach, describe, expect, it } from 'vitest';
import { staging } from '../../infra/stages';
import { runCli } from '../helpers/cli';
import { startFakeCloudFormation, type FakeCloudFormation } from '../helpers/fake-cloudformation';
import { startFakeCloudWatch, type FakeAlarm, type FakeCloudWatch } from '../helpers/fake-cloudwatch';

/**
 * `npm run drill` against a "deployed" stage, without AWS: a fake CloudFormation lists the stack's
 * alarms, a fake CloudWatch holds them and writes their history as CloudWatch does when a state changes.
 */
const topic = `arn:aws:sns:${staging.region}:${staging.account}:${staging.stackName}-MonitoringAlarmTopic1F0C2A5E-Q8V1ZR3K7D2B`;
const alarmName = (id: string) => `${staging.stackName}-Monitoring${id}A1B2C3D4-1X2Y3Z4W5V6U`;
const serverErrors = alarmName('ApiServerErrorRate');
const latency = alarmName('ApiLatencyP99');
const throttles = alarmName('PetsThrottledRequests');

/** Short waits: the fake answers at once, and re-evaluates a forced alarm within a tenth of a second. */
const quick = ['--interval', '0.02', '--timeout', '2', '--return-timeout', '2'];
const reevaluates = { reevaluatesAfterMs: 100 };

let cloudFormation: FakeCloudFormation | undefined;
let cloudWatch: FakeCloudWatch | undefined;
afterEach(async () => {
  await cloudFormation?.close();
  await cloudWatch?.close();
  cloudFormation = cloudWatch = undefined;
});

/** Deploys a staging stack holding these alarms (and one alarm of another stack beside them in CloudWatch), then runs the drill. */
async function drill(alarms: readonly FakeAlarm[], args: string[]) {
  cloudFormation = await startFakeCloudFormation([
    {
      stackName: staging.stackName,
      account: staging.account,
      region: staging.region,
      outputs: {},
      resources: [
        { logicalId: 'PetsTable42325518', type: 'AWS::DynamoDB::GlobalTable', physicalId: `${staging.stackName}-PetsTable` },
        ...alarms.map((alarm) => ({ logicalId: alarm.name.split('-')[2]!, type: 'AWS::CloudWatch::Alarm', physicalId: alarm.name })),
      ],
    },
  ]);
  cloudWatch = await startFakeCloudWatch(
    [...alarms, { name: 'AnimalStore-Production-MonitoringApiServerErrorRate', state: 'OK', topics: [topic], notification: 'succeeds' }],
    staging.region,
  );
  const result = await runCli('tools/drill.ts', args, {
    AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
    AWS_ENDPOINT_URL_CLOUDWATCH: cloudWatch.endpoint,
    AWS_ACCESS_KEY_ID: 'operator',
    AWS_SECRET_ACCESS_KEY: 'operator',
    AWS_REGION: 'us-west-2', // the stage's own region must win over the caller's default
  });
  const line = (name: string) => result.stdout.split('\n').find((text) => text.includes(`  ${name}  `)) ?? '';
  return { ...result, line, forced: cloudWatch.setAlarmStateCalls };
}

describe('npm run drill', () => {
  it("forces every alarm of the stage's stack into ALARM, sees each notification delivered, and leaves the return to CloudWatch", async () => {
    const result = await drill(
      [
        { name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates },
        { name: latency, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates },
        { name: throttles, state: 'INSUFFICIENT_DATA', topics: [topic], notification: 'succeeds', ...reevaluates },
      ],
      ['--stage', 'staging', ...quick],
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.line(serverErrors)).toMatch(/^PASS .* notified .*MonitoringAlarmTopic.*; back to OK$/);
    expect(result.line(latency)).toMatch(/^PASS .*; back to OK$/);
    expect(result.line(throttles)).toMatch(/^PASS .*; back to INSUFFICIENT_DATA$/);
    expect(result.stdout).toContain('3 of 3 alarms passed');
    // Forced into ALARM once each, by a reason that says it is a drill; never set back by hand, nothing outside the stack touched.
    expect(result.forced.map((call) => [call.alarmName, call.stateValue])).toEqual([
      [serverErrors, 'ALARM'],
      [latency, 'ALARM'],
      [throttles, 'ALARM'],
    ]);
    expect(result.forced.every((call) => call.stateReason.startsWith('DRILL'))).toBe(true);
    expect([serverErrors, latency, throttles].map((name) => cloudWatch!.stateOf(name))).toEqual(['OK', 'OK', 'INSUFFICIENT_DATA']);
  });

  it('fails the alarm whose notification SNS refused, with the error from its history, and exits non-zero', async () => {
    const result = await drill(
      [
        { name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates },
        { name: latency, state: 'OK', topics: [topic], notification: 'fails', ...reevaluates },
      ],
      ['--stage', 'staging', ...quick],
    );
    expect(result.code).toBe(1);
    expect(result.line(serverErrors)).toMatch(/^PASS /);
    expect(result.line(latency)).toMatch(/^FAIL .*Failed to execute action .*not authorized to perform: SNS:Publish/);
    expect(result.stdout).toContain('1 of 2 alarms passed');
  });

  it('fails an alarm whose notification never shows in its history, once the bounded wait is over', async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'never', ...reevaluates }],
      ['--stage', 'staging', ...quick, '--timeout', '0.3'],
    );
    expect(result.code).toBe(1);
    expect(result.line(serverErrors)).toMatch(/^FAIL .*no notification to .*MonitoringAlarmTopic.* within 0.3 s/);
  });

  it('fails a forced alarm that CloudWatch has not returned to its real state within the wait', async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds' }],
      ['--stage', 'staging', ...quick, '--return-timeout', '0.3'],
    );
    expect(result.code).toBe(1);
    expect(result.line(serverErrors)).toMatch(/^FAIL .*notified .*; still in the drill's ALARM after 0.3 s/);
  });

  it('checks the real notification of an alarm already in ALARM instead of forcing it', async () => {
    const result = await drill(
      [
        { name: serverErrors, state: 'ALARM', topics: [topic], notification: 'succeeds' },
        { name: latency, state: 'ALARM', topics: [topic], notification: 'fails' },
      ],
      ['--stage', 'staging', ...quick],
    );
    expect(result.forced).toEqual([]);
    expect(result.line(serverErrors)).toMatch(/^PASS .*already in ALARM since .*, not forced: that change notified /);
    expect(result.line(latency)).toMatch(/^FAIL .*not authorized to perform: SNS:Publish/);
    expect(result.code).toBe(1);
  });

  it('fails an alarm whose actions are disabled, without forcing it', async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', actionsEnabled: false }],
      ['--stage', 'staging', ...quick],
    );
    expect(result.code).toBe(1);
    expect(result.line(serverErrors)).toMatch(/^FAIL .*actions are disabled/);
    expect(result.forced).toEqual([]);
  });

  it('drills only the alarm named with --alarm', async () => {
    const alarms: FakeAlarm[] = [
      { name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates },
      { name: latency, state: 'OK', topics: [topic], notification: 'fails', ...reevaluates },
    ];
    const result = await drill(alarms, ['--stage', 'staging', '--alarm', serverErrors, ...quick]);
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.forced.map((call) => call.alarmName)).toEqual([serverErrors]);
    expect(result.line(latency)).toBe('');
  });

  it("refuses an --alarm the stage's stack does not hold, lists the ones it does, and forces nothing", async () => {
    const alarms: FakeAlarm[] = [
      { name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds' },
      { name: latency, state: 'OK', topics: [topic], notification: 'succeeds' },
    ];
    const result = await drill(alarms, ['--stage', 'staging', '--alarm', 'ApiServerErrorRate', ...quick]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `Stack ${staging.stackName} has no alarm "ApiServerErrorRate". Its alarms are:\n  ${serverErrors}\n  ${latency}`,
    );
    expect(result.forced).toEqual([]);
  });

  it('refuses to run without --stage, and says what to pass', async () => {
    const result = await drill([{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds' }], quick);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--stage <name>');
    expect(result.forced).toEqual([]);
  });
});
