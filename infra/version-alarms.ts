import { Duration, Stack } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  MathExpression,
  Metric,
  TreatMissingData,
  Unit,
  type IAlarm,
  type IAlarmAction,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, MetricFilter, type ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { JUDGED_VERDICT_STATUSES } from '../shared/domain/auth/authorizer-context';
import { CANARY_PERCENT, TRAFFIC_INTERVAL_MS } from '../shared/facts/deployment';
import { ERROR_CODES } from '../shared/facts/error-codes';
import type { ApiFunctionName } from '../shared/facts/function-names';
import { ANSWER_DIMENSIONS, JUDGED_STATUSES, METRICS, SERVICE_DIMENSION, type JudgedStatus } from '../shared/facts/metric-names';
import { ROUTE_ERRORS, routes } from '../shared/facts/routes';
import { SERVICE_NAME } from '../shared/facts/service';
import type { ACCESS_LOG_FIELDS } from './animal-store-http-api';
import { LIVE_ALIAS_NAME } from './api-function';
import type { AlarmThresholds } from './stages';

/** One function a deployment moves: the function, and the version CloudFormation publishes for this release. */
export interface JudgedFunction {
  readonly function: IFunction;
  /** The new version's number (`AWS::Lambda::Version`'s `Version`): what its own answers and Lambda's per-version metrics carry. */
  readonly version: string;
}

export interface VersionAlarmsProps {
  /** Every function behind the API, by name, with the version this release publishes. */
  readonly functions: ReadonlyMap<ApiFunctionName, JudgedFunction>;
  /** When a new version is judged worse than the old one, and the alarms' periods. */
  readonly thresholds: AlarmThresholds;
  /** Namespace of the stage's business metrics, where the route functions count their answers. */
  readonly metricsNamespace: string;
  /** The API's access log, which carries the authorizer's verdict and version. */
  readonly accessLogs: ILogGroup;
  /** What every alarm does when it fires and when it clears. */
  readonly alarmActions: readonly IAlarmAction[];
}

/** The access log's fields the authorizer's answers are counted from (ACCESS_LOG_FIELDS). */
const STATUS_FIELD: keyof typeof ACCESS_LOG_FIELDS = 'status';
const VERDICT_FIELD: keyof typeof ACCESS_LOG_FIELDS = 'authorizerOutcome';
const VERSION_FIELD: keyof typeof ACCESS_LOG_FIELDS = 'authorizerVersion';

/**
 * The rollback alarms of each function's deployments: its new version judged against its old one over the
 * same minutes, on the requests each served, never the API as a whole (docs/operations.md, "How a release
 * reaches traffic"). Each reads the new version's own counts beside the function's through its `live` alias, so
 * the old version's are the difference: Lambda's invocations, errors and duration per executed version, and
 * the answers each version counts itself (shared/runtime/metrics.ts) or, for the authorizer, that the access log
 * counts from the version in its verdict. A version is judged only on a minute it served `minimumRequests`.
 */
export class VersionAlarms extends Construct {
  /** Each function's alarms that stop and roll back its own deployments. */
  readonly byFunction: ReadonlyMap<ApiFunctionName, readonly IAlarm[]>;
  /** Every alarm, for the dashboard. */
  readonly alarms: readonly Alarm[];
  /** Count the authorizer's judged verdicts from the access log: by status and version, and by status alone. */
  readonly authorizerAnswers: readonly MetricFilter[];

  constructor(scope: Construct, id: string, props: VersionAlarmsProps) {
    super(scope, id);
    const period = Duration.minutes(props.thresholds.periodMinutes);
    // Even a stage no client calls must judge its canary: the deployment's own traffic gives the new version
    // twice the minimum in a period, so a version is judged on nearly every one (shared/facts/deployment.ts).
    const trafficToNewVersion = ((CANARY_PERCENT / 100) * period.toMilliseconds()) / TRAFFIC_INTERVAL_MS;
    if (trafficToNewVersion < 2 * props.thresholds.newVersion.minimumRequests) {
      throw new Error(
        `A canary's new version gets about ${trafficToNewVersion} of the deployment's own requests a period, under twice ` +
          `newVersion.minimumRequests (${props.thresholds.newVersion.minimumRequests}): an idle stage's canary would go unjudged.`,
      );
    }
    const judged = FilterPattern.any(
      ...Object.keys(JUDGED_VERDICT_STATUSES).map((verdict) => FilterPattern.stringValue(`$.${VERDICT_FIELD}`, '=', verdict)),
    );
    const authorizerAnswers = (byVersion: boolean) =>
      new MetricFilter(this, byVersion ? 'AuthorizerAnswersByVersion' : 'AuthorizerAnswers', {
        logGroup: props.accessLogs,
        filterPattern: judged,
        metricNamespace: props.metricsNamespace,
        metricName: METRICS.authorizerAnswers,
        metricValue: '1',
        unit: Unit.COUNT,
        dimensions: {
          [ANSWER_DIMENSIONS.status]: `$.${STATUS_FIELD}`,
          ...(byVersion ? { [ANSWER_DIMENSIONS.version]: `$.${VERSION_FIELD}` } : {}),
        },
      });
    this.authorizerAnswers = [authorizerAnswers(false), authorizerAnswers(true)];

    const alarms: Alarm[] = [];
    const byFunction = new Map<ApiFunctionName, IAlarm[]>();
    for (const [name, judgedFunction] of props.functions) {
      const signals = new VersionSignals(name, judgedFunction, period, props.metricsNamespace);
      const rules = [
        failuresRule(signals, props.thresholds),
        ...answerStatusesOf(name).map((status) => answersRule(signals, status, props.thresholds)),
        latencyRule(signals, props.thresholds),
      ];
      const own = rules.map((rule) => {
        const alarm = new Alarm(this, `${name}NewVersion${rule.id}`, {
          // Named for the version it judges, so each release's are new alarms, which start with no state: the
          // serving version's own ALARM (it crashes, and the release is its fix) never stops the next deployment.
          alarmName: `${Stack.of(this).stackName}-${name}-NewVersion${rule.id}-v${judgedFunction.version}`,
          metric: new MathExpression({ expression: rule.expression, usingMetrics: rule.metrics, period, label: rule.label }),
          threshold: rule.threshold,
          comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
          evaluationPeriods: props.thresholds.evaluationPeriods,
          datapointsToAlarm: props.thresholds.datapointsToAlarm,
          // A minute the new version did not run has no data: nothing to judge, so nothing breaches.
          treatMissingData: TreatMissingData.NOT_BREACHING,
          alarmDescription:
            `${rule.description(name)} Its deployment rolls back. Between deployments it watches the version serving, with no old ` +
            'version to compare: it notifies, and the next release brings alarms of its own.',
        });
        for (const action of props.alarmActions) {
          alarm.addAlarmAction(action);
          alarm.addOkAction(action);
        }
        return alarm;
      });
      alarms.push(...own);
      byFunction.set(name, own);
    }
    this.alarms = alarms;
    this.byFunction = byFunction;
  }
}

/**
 * The answers judged on each function besides failures: those among 503, 401, 404 and 400 it can give, not as its
 * success (routeNotFound's 404). Every route can answer 401 and 503 (ROUTE_ERRORS); the authorizer's 401 is a
 * refused key, its 503 a key it could not look up.
 */
export function answerStatusesOf(name: ApiFunctionName): Exclude<JudgedStatus, 500>[] {
  const route = routes.find((r) => r.operationId === name);
  const codes: readonly string[] = route === undefined ? ROUTE_ERRORS : [...ROUTE_ERRORS, ...route.errors];
  const statuses = new Set<number>(codes.map((code) => ERROR_CODES[code as keyof typeof ERROR_CODES]));
  return JUDGED_STATUSES.filter((status): status is Exclude<JudgedStatus, 500> => status !== 500 && statuses.has(status));
}

/** One rollback alarm of a function: what it computes from which metrics, and when it fires. */
interface Rule {
  readonly id: string;
  readonly expression: string;
  readonly metrics: Record<string, Metric>;
  readonly threshold: number;
  readonly label: string;
  readonly description: (name: string) => string;
}

/** The metrics a function's alarms read, by the id their math names them with. */
class VersionSignals {
  constructor(
    readonly name: ApiFunctionName,
    private readonly judged: JudgedFunction,
    private readonly period: Duration,
    private readonly namespace: string,
  ) {}

  /** A metric Lambda publishes for the function through its `live` alias: every version's, or only the new one's. */
  lambda(metricName: 'Invocations' | 'Errors' | 'Duration', newVersionOnly: boolean): Metric {
    const fn = this.judged.function;
    return new Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: {
        FunctionName: fn.functionName,
        Resource: `${fn.functionName}:${LIVE_ALIAS_NAME}`,
        ...(newVersionOnly ? { ExecutedVersion: this.judged.version } : {}),
      },
      statistic: 'Sum',
      period: this.period,
    });
  }

  /** Answers of one status the function gave: every version's, or only the new one's. */
  answers(status: JudgedStatus, newVersionOnly: boolean): Metric {
    const version: Record<string, string> = newVersionOnly ? { [ANSWER_DIMENSIONS.version]: this.judged.version } : {};
    // The authorizer answers through the route it fronts: the access log counts its verdicts (VersionAlarms), and
    // the deployment traffic those it sees, which reach it without API Gateway (functions/deployment-traffic/).
    const dimensionsMap =
      this.name === 'authorizer'
        ? { [ANSWER_DIMENSIONS.status]: String(status), ...version }
        : {
            [SERVICE_DIMENSION]: SERVICE_NAME,
            function_name: this.judged.function.functionName,
            [ANSWER_DIMENSIONS.status]: String(status),
            ...version,
          };
    return new Metric({
      namespace: this.namespace,
      metricName: this.name === 'authorizer' ? METRICS.authorizerAnswers : METRICS.answers,
      dimensionsMap,
      statistic: 'Sum',
      period: this.period,
    });
  }

  /** The requests each version served: `newN` the new one's, `allN` all of them through the alias, so the old one's is `allN - newN`. */
  requests(): Record<string, Metric> {
    return { newN: this.lambda('Invocations', true), allN: this.lambda('Invocations', false) };
  }
}

/** A denominator that is never zero: the branches that divide by it read the result only when it is at least the minimum. */
const atLeastOne = (x: string) => `IF(${x} >= 1, ${x}, 1)`;
const OLD_N = '(allN - newN)';

/**
 * The excess rate, in percentage points, of the new version's `newBad` over the old version's rate over the same
 * minute, counted only once the excess is at least `excessAnswers` answers: one stray answer among a minute's few is no regression.
 * Without the old version's minimum (the bake: it serves nothing), `oldRateWithout` stands for its rate.
 */
function excessRate(newBad: string, allBad: string, thresholds: AlarmThresholds, oldRateWithout?: string): string {
  const { minimumRequests, excessAnswers } = thresholds.newVersion;
  const oldRate = `(${allBad} - ${newBad}) / ${atLeastOne(OLD_N)}`;
  const baseline = oldRateWithout === undefined ? oldRate : `IF(${OLD_N} >= ${minimumRequests}, ${oldRate}, ${oldRateWithout})`;
  const judged =
    oldRateWithout === undefined ? `newN >= ${minimumRequests} AND ${OLD_N} >= ${minimumRequests}` : `newN >= ${minimumRequests}`;
  const excess = `${newBad} - newN * ${baseline}`;
  return `IF(${judged}, IF(${excess} >= ${excessAnswers}, 100 * (${newBad} / ${atLeastOne('newN')} - ${baseline}), 0), 0)`;
}

/**
 * Crashes, timeouts and 500s: its own failures, which no client and no other function can cause. Judged in the
 * bake too, where the old version serves nothing: a rate that stands for its own, so only `bakeFailurePercent` rolls back.
 */
function failuresRule(signals: VersionSignals, thresholds: AlarmThresholds): Rule {
  const answersFailures = signals.name !== 'authorizer';
  const metrics: Record<string, Metric> = {
    ...signals.requests(),
    newErrors: signals.lambda('Errors', true),
    allErrors: signals.lambda('Errors', false),
    ...(answersFailures ? { new500: signals.answers(500, true), all500: signals.answers(500, false) } : {}),
  };
  const newBad = answersFailures ? '(FILL(newErrors, 0) + FILL(new500, 0))' : 'FILL(newErrors, 0)';
  const allBad = answersFailures ? '(FILL(allErrors, 0) + FILL(all500, 0))' : 'FILL(allErrors, 0)';
  const { failureMarginPercent: margin, bakeFailurePercent } = thresholds.newVersion;
  return {
    id: 'Failures',
    expression: excessRate(newBad, allBad, thresholds, String((bakeFailurePercent - margin) / 100)),
    metrics,
    threshold: margin,
    label: 'new version failures over the old version’s (percentage points)',
    description: (name) =>
      `The new version of ${name} crashed, timed out or answered 500 on ${margin} percentage points more of its requests than the old version ` +
      `(at least ${thresholds.newVersion.excessAnswers} more in a minute), or, once the old version serves nothing, on ${bakeFailurePercent} % ` +
      'of its requests. Its log group, level ERROR, filtered on the new version.',
  };
}

/**
 * One status it answers more often than the old version does to the same mix of requests, judged only while both
 * serve: the answers beyond what the old version's rate predicts for the new version's requests, once that excess is
 * `answerDeviations` standard deviations of a count at the old rate. Refused outsiders add to both versions' requests
 * and to neither's answers: they thin out a difference of rates, not the excess.
 */
function answersRule(signals: VersionSignals, status: Exclude<JudgedStatus, 500>, thresholds: AlarmThresholds): Rule {
  const { minimumRequests, excessAnswers, answerDeviations } = thresholds.newVersion;
  // A route answers 401 only to a caller the authorizer accepted, which no version should refuse: in the bake it
  // is held to none. Every other status is judged only beside the old version, on the same mix of requests.
  const heldToNone = status === 401 && signals.name !== 'authorizer';
  const measured = `(FILL(allBad, 0) - FILL(newBad, 0)) / ${atLeastOne(OLD_N)}`;
  const oldRate = heldToNone ? `IF(${OLD_N} >= ${minimumRequests}, ${measured}, 0)` : measured;
  const judged = heldToNone ? `newN >= ${minimumRequests}` : `newN >= ${minimumRequests} AND ${OLD_N} >= ${minimumRequests}`;
  const excess = `(FILL(newBad, 0) - newN * ${oldRate})`;
  // Squares on both sides: metric math has no square root.
  const deviates = `${excess} * ${excess} >= ${answerDeviations ** 2} * newN * ${oldRate} * (1 - ${oldRate})`;
  return {
    id: String(status),
    expression: `IF(${judged}, IF(${deviates}, ${excess}, 0), 0)`,
    metrics: { ...signals.requests(), newBad: signals.answers(status, true), allBad: signals.answers(status, false) },
    threshold: excessAnswers,
    label: `new version ${status}s beyond the old version’s rate, once ${answerDeviations} deviations off (answers)`,
    description: (name) =>
      `The new version of ${name} answered ${status} at least ${excessAnswers} times in a minute beyond what the old version's rate ` +
      `over the same minutes predicts for its requests, ${answerDeviations} standard deviations off: ${STATUS_MEANING[status]}.`,
  };
}

const STATUS_MEANING: Readonly<Record<Exclude<JudgedStatus, 500>, string>> = {
  503: 'it fails to reach a dependency the old version reaches (a wrong table, a short timeout)',
  401: 'it refuses keys the old version accepts',
  404: 'it does not find what the old version finds (a wrong table or key)',
  400: 'it refuses requests the old version takes',
};

/**
 * Its mean duration against the old version's: means add up where percentiles do not, so the old version's is
 * what is left of the alias's. In the bake the old version serves nothing, and a mean stands for its own so that
 * only `bakeMeanDurationMs` rolls back.
 */
function latencyRule(signals: VersionSignals, thresholds: AlarmThresholds): Rule {
  const { minimumRequests, latencyFactor, latencyMarginMs, bakeMeanDurationMs } = thresholds.newVersion;
  const bakeBaseline = (bakeMeanDurationMs - latencyMarginMs) / latencyFactor;
  const oldMean = `IF(${OLD_N} >= ${minimumRequests}, (FILL(allDuration, 0) - FILL(newDuration, 0)) / ${atLeastOne(OLD_N)}, ${bakeBaseline})`;
  return {
    id: 'Latency',
    expression: `IF(newN >= ${minimumRequests}, FILL(newDuration, 0) / ${atLeastOne('newN')} - ${latencyFactor} * ${oldMean}, 0)`,
    metrics: { ...signals.requests(), newDuration: signals.lambda('Duration', true), allDuration: signals.lambda('Duration', false) },
    threshold: latencyMarginMs,
    label: `new version mean duration over ${latencyFactor} × the old version’s (ms)`,
    description: (name) =>
      `The new version of ${name} took on average more than ${latencyFactor} times the old version's mean duration and ${latencyMarginMs} ms ` +
      `(once the old version serves nothing, ${bakeMeanDurationMs} ms). Its Duration per version on the dashboard.`,
  };
}
