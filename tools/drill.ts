import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type AlarmHistoryItem,
  CloudWatchClient,
  DescribeAlarmsCommand,
  type HistoryItemType,
  type MetricAlarm,
  paginateDescribeAlarmHistory,
  SetAlarmStateCommand,
} from '@aws-sdk/client-cloudwatch';
import { paginateListSubscriptionsByTopic, SNSClient, type Subscription } from '@aws-sdk/client-sns';
import * as v from 'valibot';
import { stages } from '../infra/stages';
import { messageOf } from '../shared/runtime/error-message';
import { parseCommandLine, usageFailure } from './command-line';
import { collectPages, findDeployedStage, listStackResources, lookUpOrExit, requireOutput, StageLookupError } from './deployed-stage';

// `npm run drill`: an alarm whose topic refuses CloudWatch fails silently, and SNS accepts what nobody receives,
// so the drill checks the topic's subscribers, then forces each alarm into ALARM (docs/operations.md, "Alarm drill").
const DEFAULT_TIMEOUT_SECONDS = 120;
const DEFAULT_INTERVAL_SECONDS = 5;
/** Beyond one alarm period: CloudWatch re-evaluates a forced alarm at the period's end, give or take its own delay. */
const RETURN_MARGIN_SECONDS = 120;
/** History is asked for from this long before the drill, so a clock ahead of CloudWatch's misses nothing. */
const CLOCK_SLACK_MS = 5 * 60_000;
/** An Action item belongs to the state change whose time its stateUpdateTimestamp is, within this much. */
const SAME_CHANGE_MS = 1_000;
const ALARM_RESOURCE_TYPE = 'AWS::CloudWatch::Alarm';

const usage = `Usage: npm run drill -- --stage <name> [--alarm <alarm name>] [options]

First checks that the stage's alarm topic has a confirmed subscription, and forces nothing if not:
SNS accepts an alarm for a topic nobody hears. Then forces each alarm of the stage into ALARM
(SetAlarmState), confirms from the alarm's history that its notification reached every topic it
names, and waits for CloudWatch to return it to its real state at its next evaluation. Prints PASS or
FAIL per alarm; exits 0 only if every alarm passed.

  --stage <name>              a deployed stage (${stages.map((stage) => stage.name).join(', ')}): its alarms are its stack's
                              ${ALARM_RESOURCE_TYPE} resources. Needs credentials for the stage's account
                              (AWS_PROFILE) allowed cloudformation:DescribeStacks and ListStackResources
                              on the stack, sns:ListSubscriptionsByTopic on its alarm topic, and
                              cloudwatch:DescribeAlarms, DescribeAlarmHistory and SetAlarmState on its alarms
  --alarm <alarm name>        drill this alarm only (its CloudWatch name, as the drill prints it)
  --timeout <seconds>         how long each notification may take to show in the history (default ${DEFAULT_TIMEOUT_SECONDS})
  --return-timeout <seconds>  how long CloudWatch may take to return the alarms to their real state
                              (default: the stage's alarm period plus ${RETURN_MARGIN_SECONDS} seconds)
  --interval <seconds>        how often the alarms and their history are read (default ${DEFAULT_INTERVAL_SECONDS})

An alarm already in ALARM is not forced and is UNPROVEN (exit 1): a notification sent before the drill
says nothing of today's subscribers. Clear what holds it in ALARM, then rerun with --alarm <its name>.
Every forced alarm notifies the stage's subscribers twice (ALARM, then OK): tell them first. Never
drill production during a deployment: CodeDeploy rolls back while an alarm it watches is in ALARM.`;

const fail: (message: string) => never = usageFailure(usage);

const { values: options } = parseCommandLine(
  {
    options: {
      stage: { type: 'string' },
      alarm: { type: 'string' },
      timeout: { type: 'string' },
      'return-timeout': { type: 'string' },
      interval: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  },
  usage,
);

const stageName = options.stage ?? fail(`Say which stage to drill: --stage <name> (${stages.map((stage) => stage.name).join(', ')}).`);

function millisecondsOf(option: 'timeout' | 'return-timeout' | 'interval', fallbackSeconds: number): number {
  const text = options[option];
  const seconds = text === undefined ? fallbackSeconds : Number(text);
  if (!Number.isFinite(seconds) || seconds < 0) fail(`--${option} takes a number of seconds, not "${text}".`);
  return seconds * 1000;
}
const timeoutMs = millisecondsOf('timeout', DEFAULT_TIMEOUT_SECONDS);
const intervalMs = millisecondsOf('interval', DEFAULT_INTERVAL_SECONDS);

const { stage, alarmTopicArn, alarmNames } = await lookUpOrExit(async () => {
  const deployed = await findDeployedStage(stageName);
  const alarmTopicArn = requireOutput(deployed, 'AlarmTopicArn');
  const inStack = await listStackResources(deployed, ALARM_RESOURCE_TYPE);
  const { stackName } = deployed.stage;
  if (inStack.length === 0) throw new StageLookupError(`Stack ${stackName} has no alarms: deploy the current version of the stack first.`);
  if (options.alarm !== undefined && !inStack.includes(options.alarm)) {
    throw new StageLookupError(`Stack ${stackName} has no alarm "${options.alarm}". Its alarms are:\n  ${inStack.join('\n  ')}`);
  }
  return { stage: deployed.stage, alarmTopicArn, alarmNames: options.alarm === undefined ? inStack : [options.alarm] };
});
const returnTimeoutMs = millisecondsOf('return-timeout', stage.alarms.periodMinutes * 60 + RETURN_MARGIN_SECONDS);

/** Says who forced the state in every notification the drill sends, and is how the drill finds its own change in the history. */
const drillReason =
  `DRILL (npm run drill, run ${new Date().toISOString()} ${randomUUID().slice(0, 8)}): forced into ALARM to prove its ` +
  'notification is delivered. CloudWatch returns it to its real state at its next evaluation.';

interface Verdict {
  readonly passed: boolean;
  /** Neither passed nor failed: nothing the drill could do proves the alarm reaches its subscribers today. */
  readonly unproven?: boolean;
  readonly detail: string;
}
const judgeFailed = (detail: string): Verdict => ({ passed: false, detail });

/** One alarm's drill, filled in as its history shows what happened. */
interface Drill {
  readonly name: string;
  /** What the alarm runs when it goes into ALARM: the stage's topic and any topic of `alarmSubscriptions`. */
  readonly actions: readonly string[];
  /** Whether the drill set it into ALARM; one it could not set is already judged. */
  forced: boolean;
  /** When the change into ALARM being checked happened, by CloudWatch's clock; unknown until the history shows it. */
  changedAt?: Date;
  verdict?: Verdict;
  returnedTo?: string;
}

/** What CloudWatch records of an action in HistoryData. Undocumented JSON: every field is optional. */
const ActionData = v.object({
  actionState: v.optional(v.string()),
  notificationResource: v.optional(v.string()),
  stateUpdateTimestamp: v.optional(v.number()),
  error: v.optional(v.nullable(v.unknown())),
});
const DrillChange = v.object({ newState: v.object({ stateValue: v.literal('ALARM'), stateReason: v.literal(drillReason) }) });

function parseHistoryData<S extends v.GenericSchema>(schema: S, item: AlarmHistoryItem): v.InferOutput<S> | undefined {
  const parsed = v.safeParse(v.pipe(v.string(), v.parseJson(), schema), item.HistoryData);
  return parsed.success ? parsed.output : undefined;
}

const client = new CloudWatchClient({ region: stage.region, maxAttempts: 5 });
const sns = new SNSClient({ region: stage.region, maxAttempts: 5 });

async function describeAlarms(names: readonly string[]): Promise<Map<string, MetricAlarm>> {
  const alarms = new Map<string, MetricAlarm>();
  // DescribeAlarms takes at most 100 names.
  for (let start = 0; start < names.length; start += 100) {
    const page = await client.send(new DescribeAlarmsCommand({ AlarmNames: names.slice(start, start + 100), MaxRecords: 100 }));
    for (const alarm of page.MetricAlarms ?? []) if (alarm.AlarmName) alarms.set(alarm.AlarmName, alarm);
  }
  return alarms;
}

async function historyOf(name: string, type: HistoryItemType, since: Date): Promise<AlarmHistoryItem[]> {
  const query = { AlarmName: name, HistoryItemType: type, StartDate: since, ScanBy: 'TimestampAscending' } as const;
  return collectPages(paginateDescribeAlarmHistory({ client }, query), (page) => page.AlarmHistoryItems);
}

const topicName = (arn: string) => arn.split(':').at(-1) ?? arn;

/** A pending e-mail subscription shows this instead of an ARN; only a subscription with an ARN receives anything. */
const PENDING = 'PendingConfirmation';

const isConfirmed = (subscription: Subscription) => subscription.SubscriptionArn?.startsWith('arn:') ?? false;

async function subscriptionsOf(topicArn: string): Promise<Subscription[]> {
  try {
    return await collectPages(paginateListSubscriptionsByTopic({ client: sns }, { TopicArn: topicArn }), (page) => page.Subscriptions);
  } catch (error) {
    throw new Error(`Could not list the subscriptions of alarm topic ${topicArn} (sns:ListSubscriptionsByTopic): ${messageOf(error)}`);
  }
}

/**
 * SNS deletes an e-mail subscription left unconfirmed while the stack keeps its resource, so no deploy brings it
 * back: the stage's addresses missing from the topic are named too.
 */
async function checkSubscriptions(topicArn: string, otherTopics: readonly string[]): Promise<{ refusal?: string; warnings: string[] }> {
  const listed = await subscriptionsOf(topicArn);
  const unconfirmed = listed.filter((subscription) => !isConfirmed(subscription));
  const emails = stage.alarmSubscriptions.flatMap((subscription) => ('email' in subscription ? [subscription.email] : []));
  // The alarms may also notify an existing topic (ChatOps): a confirmed subscriber there hears them.
  let heardElsewhere = false;
  for (const other of otherTopics) heardElsewhere ||= (await subscriptionsOf(other)).some(isConfirmed);
  const missing = emails.filter((email) => !listed.some((subscription) => subscription.Endpoint?.toLowerCase() === email.toLowerCase()));
  const states = [
    ...unconfirmed.map(
      ({ Endpoint, Protocol, SubscriptionArn }) =>
        `${Endpoint} (${Protocol}): ${SubscriptionArn === PENDING ? 'pending confirmation' : (SubscriptionArn ?? 'no state')}`,
    ),
    ...missing.map((email) => `${email} (email, in infra/stages.ts): no subscription at all`),
  ];
  if (unconfirmed.length < listed.length || heardElsewhere) {
    return { warnings: states.map((state) => `${state}: it gets no alarm until it is confirmed or subscribed again`) };
  }

  const addresses = [
    ...unconfirmed.flatMap((subscription) => (subscription.Protocol === 'email' && subscription.Endpoint ? [subscription.Endpoint] : [])),
    ...missing,
  ];
  const subscribe = (address: string) =>
    `  aws sns subscribe --region ${stage.region} --topic-arn ${topicArn} --protocol email --notification-endpoint ${address}`;
  const refusal = [
    `Alarm topic ${topicArn} has no confirmed subscription, so the alarms of the ${stage.name} stage reach nobody; no alarm was forced.`,
    ...(states.length > 0 ? states.map((state) => `  ${state}`) : ['  (the topic has no subscription at all)']),
    'Confirm a pending address from its "AWS Notification - Subscription Confirmation" e-mail. If that e-mail is lost,',
    'or SNS has deleted the subscription (it does with one left unconfirmed), subscribe the address again:',
    ...(addresses.length > 0 ? addresses.map(subscribe) : [subscribe('<address>')]),
    emails.length > 0
      ? `or remove it from alarmSubscriptions of ${stage.name} in infra/stages.ts and deploy, then put it back and deploy again ` +
        '(a deploy that changes nothing re-creates nothing). Then rerun the drill.'
      : `or add the address to alarmSubscriptions of ${stage.name} in infra/stages.ts (it lists none) and deploy. Then rerun the drill.`,
  ].join('\n');
  return { refusal, warnings: [] };
}

/**
 * From the alarm's Action history, oldest first: fails once an action failed, passes once all succeeded, undefined
 * while some are missing. The return's OK notification is told apart by the change it names.
 */
function judge(drill: Drill, items: readonly AlarmHistoryItem[], changedAt: Date): Verdict | undefined {
  const outcomes = drill.actions.map((action) => {
    for (const item of items) {
      const data = parseHistoryData(ActionData, item);
      if (!data || (data.notificationResource ?? (item.HistorySummary?.includes(action) ? action : undefined)) !== action) continue;
      const sameChange =
        data.stateUpdateTimestamp === undefined
          ? (item.Timestamp?.getTime() ?? 0) >= changedAt.getTime() - SAME_CHANGE_MS
          : Math.abs(data.stateUpdateTimestamp - changedAt.getTime()) < SAME_CHANGE_MS;
      if (!sameChange) continue;
      if (data.actionState === 'Succeeded') return { action, failure: undefined };
      const error = typeof data.error === 'string' ? `Failed to execute action ${action}: ${data.error}` : undefined;
      return { action, failure: error ?? item.HistorySummary ?? `action ${action} ended ${data.actionState ?? 'without a state'}` };
    }
    return undefined;
  });
  const failures = outcomes.flatMap((outcome) => (outcome?.failure ? [outcome.failure] : []));
  if (failures.length > 0) return judgeFailed(failures.join('; '));
  if (outcomes.some((outcome) => outcome === undefined)) return undefined;
  return { passed: true, detail: `notified ${drill.actions.map(topicName).join(', ')} (forced into ALARM at ${changedAt.toISOString()})` };
}

async function checkNotification(drill: Drill, since: Date): Promise<void> {
  if (!drill.changedAt) {
    const changes = await historyOf(drill.name, 'StateUpdate', since);
    drill.changedAt = changes.find((item) => parseHistoryData(DrillChange, item))?.Timestamp;
    if (!drill.changedAt) return;
  }
  const actions = await historyOf(drill.name, 'Action', new Date(drill.changedAt.getTime() - SAME_CHANGE_MS));
  drill.verdict = judge(drill, actions, drill.changedAt);
}

/** A forced alarm is back once its state is no longer the drill's: CloudWatch evaluated it and wrote its own reason. */
async function checkReturns(drills: readonly Drill[]): Promise<void> {
  const alarms = await describeAlarms(drills.map((drill) => drill.name));
  for (const drill of drills) {
    const alarm = alarms.get(drill.name);
    if (alarm?.StateReason !== drillReason) drill.returnedTo = alarm?.StateValue ?? 'deleted';
  }
}

async function runDrill(): Promise<Drill[]> {
  const since = new Date(Date.now() - CLOCK_SLACK_MS);
  const alarms = await describeAlarms(alarmNames);
  const drills: Drill[] = alarmNames.map((name) => {
    const alarm = alarms.get(name);
    const drill: Drill = { name, actions: alarm?.AlarmActions ?? [], forced: false };
    if (!alarm) drill.verdict = judgeFailed('CloudWatch has no metric alarm of that name, though the stack lists it');
    else if (alarm.ActionsEnabled === false)
      drill.verdict = judgeFailed(
        `its actions are disabled, so it notifies nobody (aws cloudwatch enable-alarm-actions --alarm-names ${name})`,
      );
    else if (drill.actions.length === 0) drill.verdict = judgeFailed('it has no ALARM action, so it notifies nobody');
    else if (alarm.StateValue === 'ALARM') {
      // Forcing it would change nothing, and its notification went out before the drill, to whoever was subscribed then.
      const since = (alarm.StateTransitionedTimestamp ?? alarm.StateUpdatedTimestamp)?.toISOString() ?? 'an unknown time';
      drill.verdict = {
        passed: false,
        unproven: true,
        detail: `already in ALARM since ${since}, so not forced: clear what holds it there, then rerun with --alarm ${name}`,
      };
    }
    return drill;
  });

  for (const drill of drills) {
    if (drill.verdict) continue;
    try {
      await client.send(new SetAlarmStateCommand({ AlarmName: drill.name, StateValue: 'ALARM', StateReason: drillReason }));
      drill.forced = true;
    } catch (error) {
      drill.verdict = judgeFailed(`SetAlarmState refused: ${messageOf(error)}`);
    }
  }
  const forcedAt = Date.now();
  const forced = drills.filter((drill) => drill.forced).length;
  process.stdout.write(
    `Forced ${forced} of ${drills.length} alarms into ALARM; waiting up to ${timeoutMs / 1000} s for their notifications` +
      (forced > 0 ? ` and up to ${returnTimeoutMs / 1000} s for CloudWatch to return them.\n` : '.\n'),
  );

  // One loop for both waits, each bounded by its own timeout from the moment the alarms were forced.
  for (;;) {
    const elapsed = Date.now() - forcedAt;
    const unjudged = elapsed <= timeoutMs ? drills.filter((drill) => !drill.verdict) : [];
    const away = elapsed <= returnTimeoutMs ? drills.filter((drill) => drill.forced && drill.returnedTo === undefined) : [];
    if (unjudged.length === 0 && away.length === 0) break;
    for (const drill of unjudged) await checkNotification(drill, since);
    if (away.length > 0) await checkReturns(away);
    if (drills.every((drill) => drill.verdict && (!drill.forced || drill.returnedTo !== undefined))) break;
    await sleep(intervalMs);
  }
  return drills;
}

/** The line's verdict once the waits are over: a missing notification or a forced state CloudWatch never undid fails it. */
function settle(drill: Drill): Verdict {
  const stuck =
    `still in the drill's ALARM after ${returnTimeoutMs / 1000} s: CloudWatch has not re-evaluated it, or it is really in ALARM now. ` +
    'Check it before any deployment: CodeDeploy rolls back while an alarm it watches is in ALARM';
  const missed = drill.changedAt
    ? `no notification to ${drill.actions.map(topicName).join(', ')} in its history within ${timeoutMs / 1000} s of its change into ALARM`
    : `its forced change into ALARM did not show in its history within ${timeoutMs / 1000} s`;
  const verdict = drill.verdict ?? judgeFailed(missed);
  if (!drill.forced) return verdict;
  if (drill.returnedTo === undefined) return judgeFailed(`${verdict.detail}; ${stuck}`);
  return { ...verdict, detail: `${verdict.detail}; back to ${drill.returnedTo}` };
}

try {
  process.stdout.write(`Alarm drill of the ${stage.name} stage (${stage.stackName}, ${stage.region}): ${alarmNames.length} alarms.\n`);
  const notified = [...(await describeAlarms(alarmNames)).values()].flatMap((alarm) => alarm.AlarmActions ?? []);
  const otherTopics = [...new Set(notified)].filter((arn) => arn.startsWith('arn:aws:sns:') && arn !== alarmTopicArn);
  const { refusal, warnings } = await checkSubscriptions(alarmTopicArn, otherTopics);
  if (refusal !== undefined) {
    process.stderr.write(`${refusal}\n`);
    process.exitCode = 1;
  } else {
    for (const warning of warnings) process.stdout.write(`WARN  ${topicName(alarmTopicArn)}  ${warning}\n`);
    const verdicts = (await runDrill()).map((drill) => ({ name: drill.name, ...settle(drill) }));
    for (const { name, passed, unproven, detail } of verdicts)
      process.stdout.write(`${unproven ? 'UNPROVEN' : passed ? 'PASS' : 'FAIL'}  ${name}  ${detail}\n`);
    const passed = verdicts.filter((verdict) => verdict.passed).length;
    process.stdout.write(`${passed} of ${verdicts.length} alarms passed.\n`);
    if (passed < verdicts.length) process.exitCode = 1;
  }
} catch (error) {
  process.stderr.write(`The drill of the ${stage.name} stage stopped: ${messageOf(error)}\n`);
  process.exitCode = 1;
} finally {
  client.destroy();
  sns.destroy();
}
