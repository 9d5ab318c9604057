import { createServer, type Server } from 'node:http';
import { listenOnLoopback } from './fake-aws-server';

export type AlarmState = 'OK' | 'ALARM' | 'INSUFFICIENT_DATA';

/** An alarm as the fake holds it. */
export interface FakeAlarm {
  readonly name: string;
  /** Its real state: what its metric says, and where it returns when CloudWatch re-evaluates it. */
  readonly state: AlarmState;
  /** The SNS topics it notifies, on ALARM and on OK. */
  readonly topics: readonly string[];
  /** False when someone disabled its actions: a state change then notifies nobody. */
  readonly actionsEnabled?: boolean;
  /**
   * What happens when it notifies a topic: SNS takes the message, SNS refuses it (as when the topic's
   * policy does not admit CloudWatch), or nothing ever reaches its history.
   */
  readonly notification: 'succeeds' | 'fails' | 'never';
  /** Whether CloudWatch re-evaluates it, returning it to its real state, once a forced state is this old. */
  readonly reevaluatesAfterMs?: number;
}

/** A SetAlarmState request the fake received. */
export interface SetAlarmStateCall {
  readonly alarmName: string;
  readonly stateValue: string;
  readonly stateReason: string;
}

export interface FakeCloudWatch {
  /** Point the SDK here with AWS_ENDPOINT_URL_CLOUDWATCH. */
  readonly endpoint: string;
  readonly setAlarmStateCalls: SetAlarmStateCall[];
  /** An alarm's state now. */
  stateOf(name: string): AlarmState | undefined;
  close(): Promise<void>;
}

interface HistoryItem {
  readonly AlarmName: string;
  readonly AlarmType: 'MetricAlarm';
  readonly Timestamp: number;
  readonly HistoryItemType: 'StateUpdate' | 'Action';
  readonly HistorySummary: string;
  readonly HistoryData: string;
}

interface HeldAlarm {
  readonly config: FakeAlarm;
  state: AlarmState;
  reason: string;
  updatedAt: number;
  /** When it was forced away from its real state, until CloudWatch re-evaluates it. */
  forcedAt?: number;
}

/** How long before the drill an alarm already in ALARM at the start went there. */
const EARLIER_MS = 60_000;

/**
 * Just enough of CloudWatch's JSON API (SetAlarmState, DescribeAlarms, DescribeAlarmHistory) for the
 * alarm drill to run without an AWS account. A state change writes the history CloudWatch writes: a
 * StateUpdate item, then one Action item per topic, succeeded or failed as the alarm is configured.
 * Re-evaluation is applied when a request arrives, so nothing runs between requests.
 */
export async function startFakeCloudWatch(alarms: readonly FakeAlarm[], region = 'eu-west-1'): Promise<FakeCloudWatch> {
  const setAlarmStateCalls: SetAlarmStateCall[] = [];
  const history: HistoryItem[] = [];
  const held = new Map<string, HeldAlarm>();
  for (const config of alarms) {
    const alarm: HeldAlarm = {
      config,
      state: 'INSUFFICIENT_DATA',
      reason: 'Unchecked: Initial alarm creation',
      updatedAt: Date.now() - 2 * EARLIER_MS,
    };
    held.set(config.name, alarm);
    if (config.state !== alarm.state)
      changeState(alarm, config.state, 'Threshold Crossed: 2 out of the last 3 datapoints', Date.now() - EARLIER_MS);
  }

  function changeState(alarm: HeldAlarm, state: AlarmState, reason: string, at: number): void {
    const oldState = { stateValue: alarm.state, stateReason: alarm.reason };
    alarm.state = state;
    alarm.reason = reason;
    alarm.updatedAt = at;
    const name = alarm.config.name;
    history.push({
      AlarmName: name,
      AlarmType: 'MetricAlarm',
      Timestamp: at,
      HistoryItemType: 'StateUpdate',
      HistorySummary: `Alarm updated from ${oldState.stateValue} to ${state}`,
      HistoryData: JSON.stringify({ version: '1.0', oldState, newState: { stateValue: state, stateReason: reason } }),
    });
    if (state === 'INSUFFICIENT_DATA' || alarm.config.actionsEnabled === false || alarm.config.notification === 'never') return;
    for (const topic of alarm.config.topics) {
      const succeeded = alarm.config.notification === 'succeeds';
      const error = succeeded
        ? null
        : `Resource: arn:aws:cloudwatch:${region}:111111111111:alarm:${name} is not authorized to perform: SNS:Publish on resource: ${topic} because no resource-based policy allows the SNS:Publish action`;
      history.push({
        AlarmName: name,
        AlarmType: 'MetricAlarm',
        Timestamp: at + 40,
        HistoryItemType: 'Action',
        HistorySummary: succeeded
          ? `Successfully executed action ${topic}`
          : `Failed to execute action ${topic}. Received error: "${error}"`,
        HistoryData: JSON.stringify({
          actionState: succeeded ? 'Succeeded' : 'Failed',
          stateUpdateTimestamp: at,
          notificationResource: topic,
          publishedMessage: succeeded ? JSON.stringify({ AlarmName: name, NewStateValue: state, NewStateReason: reason }) : null,
          error,
        }),
      });
    }
  }

  function reevaluate(now: number): void {
    for (const alarm of held.values()) {
      const after = alarm.config.reevaluatesAfterMs;
      if (alarm.forcedAt === undefined || after === undefined || now - alarm.forcedAt < after) continue;
      alarm.forcedAt = undefined;
      if (alarm.state !== alarm.config.state) changeState(alarm, alarm.config.state, 'Threshold Crossed: re-evaluated', now);
    }
  }

  const operations: Record<string, (input: any) => unknown> = {
    SetAlarmState(input) {
      setAlarmStateCalls.push({ alarmName: input.AlarmName, stateValue: input.StateValue, stateReason: input.StateReason });
      const alarm = held.get(input.AlarmName);
      if (!alarm) throw new FakeError('ResourceNotFound', `Alarm ${input.AlarmName} does not exist`);
      // Like CloudWatch: only a change is recorded and notifies.
      if (alarm.state !== input.StateValue) {
        changeState(alarm, input.StateValue, input.StateReason, Date.now());
        alarm.forcedAt = alarm.updatedAt;
      }
      return {};
    },
    DescribeAlarms(input) {
      const names: string[] = input.AlarmNames ?? [...held.keys()];
      return {
        MetricAlarms: names.flatMap((name) => {
          const alarm = held.get(name);
          if (!alarm) return [];
          return [
            {
              AlarmName: name,
              AlarmArn: `arn:aws:cloudwatch:${region}:111111111111:alarm:${name}`,
              ActionsEnabled: alarm.config.actionsEnabled ?? true,
              AlarmActions: alarm.config.topics,
              OKActions: alarm.config.topics,
              StateValue: alarm.state,
              StateReason: alarm.reason,
              StateUpdatedTimestamp: alarm.updatedAt / 1000,
              StateTransitionedTimestamp: alarm.updatedAt / 1000,
            },
          ];
        }),
        CompositeAlarms: [],
      };
    },
    DescribeAlarmHistory(input) {
      const items = history
        .filter(
          (item) =>
            (input.AlarmName === undefined || item.AlarmName === input.AlarmName) &&
            (input.HistoryItemType === undefined || item.HistoryItemType === input.HistoryItemType) &&
            (input.StartDate === undefined || item.Timestamp >= input.StartDate * 1000) &&
            (input.EndDate === undefined || item.Timestamp <= input.EndDate * 1000),
        )
        .sort((a, b) => (input.ScanBy === 'TimestampAscending' ? a.Timestamp - b.Timestamp : b.Timestamp - a.Timestamp));
      return { AlarmHistoryItems: items.map((item) => ({ ...item, Timestamp: item.Timestamp / 1000 })) };
    },
  };

  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const operation = String(req.headers['x-amz-target'] ?? '').split('.')[1] ?? '';
      res.setHeader('content-type', 'application/x-amz-json-1.0');
      try {
        const handle = operations[operation];
        if (!handle) throw new FakeError('InvalidAction', `The fake does not do ${operation}`);
        reevaluate(Date.now());
        res.end(JSON.stringify(handle(JSON.parse(body || '{}'))));
      } catch (error) {
        if (!(error instanceof FakeError)) throw error;
        res.statusCode = 400;
        res.setHeader('x-amzn-query-error', `${error.code};Sender`);
        res.end(JSON.stringify({ __type: `com.amazonaws.cloudwatch#${error.code}`, message: error.message }));
      }
    });
  });
  const { endpoint, close } = await listenOnLoopback(server);
  return {
    endpoint,
    setAlarmStateCalls,
    stateOf: (name) => {
      reevaluate(Date.now());
      return held.get(name)?.state;
    },
    close,
  };
}

class FakeError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
