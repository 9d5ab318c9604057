import { afterEach, describe, expect, it } from 'vitest';
import { production, type StageConfig, staging } from '../../infra/stages';
import { runCli } from '../helpers/cli';
import { startFakeCloudFormation, type FakeCloudFormation } from '../helpers/fake-cloudformation';
import { startFakeCloudWatch, type FakeAlarm, type FakeCloudWatch } from '../helpers/fake-cloudwatch';
import { startFakeSns, type FakeSns, type FakeSubscription, type FakeTopic } from '../helpers/fake-sns';

/**
 * `npm run drill` against a "deployed" stage, without AWS: a fake CloudFormation lists the stack's
 * alarms and outputs its alarm topic, a fake SNS lists the topic's subscriptions, and a fake CloudWatch
 * holds the alarms and writes their history as CloudWatch does when a state changes.
 */
const topicOf = (stage: StageConfig) =>
  `arn:aws:sns:${stage.region}:${stage.account}:${stage.stackName}-MonitoringAlarmTopic1F0C2A5E-Q8V1ZR3K7D2B`;
const topic = topicOf(staging);
const alarmName = (id: string) => `${staging.stackName}-Monitoring${id}A1B2C3D4-1X2Y3Z4W5V6U`;
const confirmed: FakeSubscription = { protocol: 'email', endpoint: 'oncall@example.com', confirmed: true };
const pending: FakeSubscription = { protocol: 'email', endpoint: 'new-hire@example.com', confirmed: false };
const serverErrors = alarmName('ApiServerErrorRate');
const latency = alarmName('ApiLatencyP99');
const throttles = alarmName('PetsThrottledRequests');

/** Short waits: the fake answers at once, and re-evaluates a forced alarm within a tenth of a second. */
const quick = ['--interval', '0.02', '--timeout', '2', '--return-timeout', '2'];
const reevaluates = { reevaluatesAfterMs: 100 };

let cloudFormation: FakeCloudFormation | undefined;
let cloudWatch: FakeCloudWatch | undefined;
let sns: FakeSns | undefined;
afterEach(async () => {
  await cloudFormation?.close();
  await cloudWatch?.close();
  await sns?.close();
  cloudFormation = cloudWatch = sns = undefined;
});

/**
 * Deploys a stack of the stage (staging unless told) holding these alarms (and one alarm of another stack
 * beside them in CloudWatch), its alarm topic with these subscriptions (one confirmed unless told), then runs the drill.
 */
async function drill(
  alarms: readonly FakeAlarm[],
  args: string[],
  {
    stage = staging,
    subscriptions = [confirmed],
    pageSize,
    subscriptionsDenied,
    otherTopics = [],
  }: {
    stage?: StageConfig;
    subscriptions?: readonly FakeSubscription[];
    pageSize?: number;
    subscriptionsDenied?: boolean;
    /** Existing topics the stage's alarms also notify, as SNS holds them. */
    otherTopics?: readonly FakeTopic[];
  } = {},
) {
  cloudFormation = await startFakeCloudFormation([
    {
      stackName: stage.stackName,
      account: stage.account,
      region: stage.region,
      outputs: { AlarmTopicArn: topicOf(stage) },
      resources: [
        { logicalId: 'PetsTable42325518', type: 'AWS::DynamoDB::GlobalTable', physicalId: `${stage.stackName}-PetsTable` },
        ...alarms.map((alarm) => ({ logicalId: alarm.name.split('-')[2]!, type: 'AWS::CloudWatch::Alarm', physicalId: alarm.name })),
      ],
    },
  ]);
  cloudWatch = await startFakeCloudWatch(
    [...alarms, { name: 'AnimalStore-Production-MonitoringApiServerErrorRate', state: 'OK', topics: [topic], notification: 'succeeds' }],
    stage.region,
  );
  sns = await startFakeSns([{ arn: topicOf(stage), subscriptions, denied: subscriptionsDenied }, ...otherTopics], { pageSize });
  const result = await runCli('tools/drill.ts', args, {
    AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.endpoint,
    AWS_ENDPOINT_URL_CLOUDWATCH: cloudWatch.endpoint,
    AWS_ENDPOINT_URL_SNS: sns.endpoint,
    AWS_ACCESS_KEY_ID: 'operator',
    AWS_SECRET_ACCESS_KEY: 'operator',
    AWS_REGION: 'us-west-2', // the stage's own region must win over the caller's default
  });
  const line = (name: string) => result.stdout.split('\n').find((text) => text.includes(`  ${name}  `)) ?? '';
  return { ...result, line, forced: cloudWatch.setAlarmStateCalls, subscriptionPages: sns.listSubscriptionsCalls };
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

  it('reports an alarm already in ALARM as unproven, forcing nothing: a notification sent before the drill proves nothing of today', async () => {
    const result = await drill(
      [
        { name: serverErrors, state: 'ALARM', topics: [topic], notification: 'succeeds' },
        { name: latency, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates },
      ],
      ['--stage', 'staging', ...quick],
    );
    expect(result.forced.map((forced) => forced.alarmName)).toEqual([latency]);
    expect(result.line(serverErrors)).toMatch(new RegExp(`^UNPROVEN .*already in ALARM since .*rerun with --alarm ${serverErrors}`));
    expect(result.line(latency)).toMatch(/^PASS /);
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

  it("fails before forcing any alarm when the alarm topic's only subscription is pending, naming the topic and what to do", async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates }],
      ['--stage', 'staging', ...quick],
      {
        subscriptions: [pending],
      },
    );
    expect(result.code).not.toBe(0);
    expect(result.forced).toEqual([]);
    expect(result.stderr).toContain(`Alarm topic ${topic} has no confirmed subscription, so the alarms of the staging stage reach nobody`);
    expect(result.stderr).toContain('  new-hire@example.com (email): pending confirmation\n');
    expect(result.stderr).toContain('"AWS Notification - Subscription Confirmation" e-mail');
    expect(result.stderr).toContain(
      `aws sns subscribe --region ${staging.region} --topic-arn ${topic} --protocol email --notification-endpoint new-hire@example.com`,
    );
    expect(result.stdout).not.toMatch(/^(PASS|FAIL) /m);
  });

  it('fails the same way when SNS has deleted the unconfirmed subscription, naming the address the stage lists', async () => {
    const [address] = production.alarmSubscriptions.flatMap((subscription) => ('email' in subscription ? [subscription.email] : []));
    expect(address, 'production subscribes an e-mail address (infra/stages.ts)').toBeDefined();
    const productionTopic = topicOf(production);
    const productionAlarm = `${production.stackName}-MonitoringApiServerErrorRateA1B2C3D4-1X2Y3Z4W5V6U`;
    const result = await drill(
      [{ name: productionAlarm, state: 'OK', topics: [productionTopic], notification: 'succeeds', ...reevaluates }],
      ['--stage', 'production', ...quick],
      { stage: production, subscriptions: [] },
    );
    expect(result.code).not.toBe(0);
    expect(result.forced).toEqual([]);
    expect(result.stderr).toContain(`Alarm topic ${productionTopic} has no confirmed subscription`);
    expect(result.stderr).toContain(`  ${address} (email, in infra/stages.ts): no subscription at all\n`);
    expect(result.stderr).toContain(`--topic-arn ${productionTopic} --protocol email --notification-endpoint ${address}`);
    expect(result.stderr).toMatch(
      /remove it from alarmSubscriptions of production in infra\/stages\.ts and deploy, then put it back and deploy again/,
    );
  });

  it('fails a stage whose topic has no subscription and whose configuration gives none, saying to add one', async () => {
    expect(
      staging.alarmSubscriptions.filter((subscription) => 'email' in subscription),
      'staging subscribes no address (infra/stages.ts)',
    ).toEqual([]);
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates }],
      ['--stage', 'staging', ...quick],
      { subscriptions: [] },
    );
    expect(result.code).not.toBe(0);
    expect(result.forced).toEqual([]);
    expect(result.stderr).toContain(`Alarm topic ${topic} has no confirmed subscription`);
    expect(result.stderr).toContain('(the topic has no subscription at all)');
    expect(result.stderr).toContain('or add the address to alarmSubscriptions of staging in infra/stages.ts (it lists none) and deploy');
  });

  it('drills as before when a subscription is confirmed, warning of each pending one beside it', async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates }],
      ['--stage', 'staging', ...quick],
      { subscriptions: [pending, confirmed] },
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.forced.map((call) => call.alarmName)).toEqual([serverErrors]);
    expect(result.line(serverErrors)).toMatch(/^PASS /);
    const warnings = result.stdout.split('\n').filter((text) => text.startsWith('WARN '));
    expect(warnings).toEqual([
      `WARN  ${topic.split(':').at(-1)}  new-hire@example.com (email): pending confirmation: it gets no alarm until it is confirmed or subscribed again`,
    ]);
  });

  it.each([
    ['drills', true, 0],
    ['refuses', false, 1],
  ] as const)(
    '%s a stage that notifies only an existing topic by whether that topic has a confirmed subscriber',
    async (_, heard, code) => {
      const chatOps = 'arn:aws:sns:eu-west-1:111111111111:chatops';
      const result = await drill(
        [{ name: serverErrors, state: 'OK', topics: [topic, chatOps], notification: 'succeeds', ...reevaluates }],
        ['--stage', 'staging', ...quick],
        {
          subscriptions: [],
          otherTopics: [{ arn: chatOps, subscriptions: [{ protocol: 'https', endpoint: 'https://chat.acme.io/hook', confirmed: heard }] }],
        },
      );
      expect(result.code, result.stdout + result.stderr).toBe(code);
      expect(result.forced.length > 0).toBe(heard);
    },
  );

  it('reads every page of the subscriptions to find the confirmed one', async () => {
    const others = ['a', 'b', 'c'].map((name) => ({ ...pending, endpoint: `${name}@example.com` }));
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates }],
      ['--stage', 'staging', ...quick],
      { subscriptions: [...others, confirmed], pageSize: 2 },
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.subscriptionPages.map((call) => call.nextToken)).toEqual([undefined, '2']);
    expect(result.stdout.split('\n').filter((text) => text.startsWith('WARN '))).toHaveLength(3);
  });

  it("stops without forcing anything when the credentials may not list the topic's subscriptions, naming the permission", async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds', ...reevaluates }],
      ['--stage', 'staging', ...quick],
      { subscriptionsDenied: true },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`Could not list the subscriptions of alarm topic ${topic} (sns:ListSubscriptionsByTopic): `);
    expect(result.stderr).toContain('not authorized');
    expect(result.forced).toEqual([]);
  });

  it('answers an unknown option with what is wrong and the usage, exit 2, forcing nothing', async () => {
    const result = await drill(
      [{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds' }],
      ['--stage', 'staging', '--alarms', 'x', ...quick],
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Unknown option '--alarms'.*\n\nUsage: npm run drill/s);
    expect(result.forced).toEqual([]);
  });

  it('refuses to run without --stage, and says what to pass', async () => {
    const result = await drill([{ name: serverErrors, state: 'OK', topics: [topic], notification: 'succeeds' }], quick);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--stage <name>');
    expect(result.forced).toEqual([]);
  });
});
