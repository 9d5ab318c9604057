import { throttledRoutes, type StageConfig, type ThrottledRoute } from '../../infra/stages';
import { BAKE_MINUTES, TRAFFIC_INTERVAL_MS } from '../../shared/facts/deployment';
import { ENV } from '../../shared/facts/environment';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { PROBE_METRICS } from '../../shared/facts/metric-names';
import { preflightRoute, routeKey, routes } from '../../shared/facts/routes';
import { resourcesOfType, type CfnResourceJson, type CfnTemplate } from '../../tools/lambda/synth';

/**
 * Evaluates a synthesized template's alarms over simulated minutes, as CloudWatch would: the access log
 * lines API Gateway writes (in the stage's own access log format) go through the template's metric
 * filters, Lambda's metrics are counted per function and per version as Lambda publishes them for alias
 * invocations, the functions' own metric lines are the ones their bundles wrote (./bundle-signals.ts), and
 * each alarm's metric math, threshold, M-of-N and missing-data rule decide its state minute by minute.
 * Everything is read from the template (resources are found by what they are, not by their ids), so the
 * evaluation follows the stacks wherever their constructs live, and evaluates an older template as well.
 */

/** Who sends a request, as the authorizer sees it. */
export type Caller =
  | 'no key'
  | 'malformed key'
  | 'unknown key'
  | 'revoked key'
  /** A client's key: issued by `npm run keys`, it has no expiry. */
  | 'valid key'
  /** A key with an expiry, such as the pre-traffic hook's check key. */
  | 'valid key with an expiry';

/** Requests on one route, every second of a minute. */
export interface Traffic {
  /** The route whose share of the stage's throttle admits them (infra/stages.ts). */
  readonly route: ThrottledRoute;
  readonly perSecond: number;
  readonly caller: Caller;
  /** What every version answers them, accepted, instead of the route's success: an invalid create's 400, an unknown pet's 404. */
  readonly refused?: 400 | 404;
}

/** What one version of a function does to the requests it serves. */
export type Behaviour =
  | 'healthy'
  /** Throws: Lambda counts an error, API Gateway answers 500, and the function writes no line. */
  | 'crashes'
  /** A handled failure on every valid request: its store fails for it alone (a wrong table), so it answers 500. */
  | 'answers 500'
  /** Answers 503 to every valid request: it cannot reach its store. */
  | 'store unavailable'
  /** getPet answers 404 for pets that exist (it reads the wrong table). */
  | 'answers 404 for existing pets'
  /** createPet answers 400 to valid bodies. */
  | 'answers 400 to valid bodies'
  /** A route answers 401 though the authorizer accepted the key. */
  | 'refuses accepted keys'
  | 'slow ×10'
  | 'slow +1 s'
  /** The authorizer answers `invalid` to every valid key. */
  | 'refuses valid keys'
  /** The authorizer answers `invalid` to keys without an expiry: every client's, none of the hook's check keys. */
  | 'refuses keys without an expiry';

/**
 * A version's behaviour: on every request it concerns, on a share of them or on so many a minute (a fault
 * at a rate), or only once the new version takes all traffic (it fails after the shift, in the bake).
 */
export type Conduct =
  | Behaviour
  | { readonly behaviour: Behaviour; readonly share?: number; readonly perMinute?: number }
  | { readonly afterTheShift: Behaviour };

/** Where a deployment is: the canary (the new version serves the template's canary share) or the bake (it serves all). */
export type Phase = 'canary' | 'bake';

/** One function's deployment during a minute. */
export interface Deployment {
  readonly function: ApiFunctionName;
  readonly phase: Phase;
  readonly newVersion: Conduct;
  /** Healthy unless said. */
  readonly oldVersion?: Conduct;
  /** The stage's own requests through the function's alias (functions/deployment-traffic/), when the stage sends them. */
  readonly deploymentTraffic: boolean;
}

/** One simulated minute: who calls, what a deployment does meanwhile, and which store is down for every version. */
export interface Minute {
  readonly traffic: readonly Traffic[];
  readonly deployment?: Deployment;
  /** The keys table does not answer: every key the authorizer looks up is `unavailable` (our 503). */
  readonly keysTableDown?: boolean;
  /** The pets table does not answer: every valid request of a function that reads it is answered 503. */
  readonly petsTableDown?: boolean;
}

/** One of the deployment traffic's requests as the function's healthy version answers it. */
export interface DeploymentRequest {
  /** 'valid key' for a route's requests, which carry an accepted verdict; the authorizer's key otherwise. */
  readonly caller: Caller;
  readonly refused?: 400 | 404;
}

/**
 * What the functions' bundles wrote and answered, run as deployed with each version set (./bundle-signals.ts):
 * plain data, so it can be computed once and kept.
 */
export interface BundleSignals {
  /** By function, version and status: the EMF lines a route function writes for that answer to an accepted caller (none for a success). */
  readonly answers: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>>>;
  /** By version and verdict: the context the authorizer answers API Gateway with. */
  readonly authorizer: Readonly<Record<string, Readonly<Record<string, Readonly<Record<string, unknown>>>>>>;
  /** By function: the deployment traffic's requests in turn (functions/deployment-traffic/traffic-requests.ts). */
  readonly deploymentTraffic: Readonly<Partial<Record<ApiFunctionName, readonly DeploymentRequest[]>>>;
  /** By version and status: the lines the deployment traffic writes for the authorizer's judged verdicts on its own requests. */
  readonly deploymentTrafficCounts: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
}

/**
 * The versions a simulated deployment runs: the template's AWS::Lambda::Version stands for `new`, the version the
 * alias served before it is `old`. A function not being deployed runs the template's version.
 */
export const VERSIONS = { new: '2', old: '1' } as const;

/** The name a resource gets in the simulated account: its logical id, so metrics, lines and alarms agree. */
export function physicalNameOf(logicalId: string): string {
  return logicalId;
}

/** One access log line, as the stage's format writes it, and how many requests wrote it this minute. */
export interface LoggedRequests {
  readonly line: Readonly<Record<string, unknown>>;
  readonly count: number;
}

/** What one version of a function did in a minute, through its `live` alias. */
export interface VersionRun {
  readonly invocations: number;
  readonly errors: number;
  /** Durations in milliseconds, with how many invocations took each. */
  readonly durations: ReadonlyMap<number, number>;
}

/** One data point of a metric, from a metric line a function wrote, and how many lines gave it. */
export interface DataPoint {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly value: number;
  readonly count: number;
}

/** What a minute leaves in CloudWatch: the access log's lines, each function version's invocations, and the functions' own metric lines. */
export interface SimulatedMinute {
  readonly requests: readonly LoggedRequests[];
  readonly lambda: ReadonlyMap<ApiFunctionName, ReadonlyMap<string, VersionRun>>;
  readonly dataPoints: readonly DataPoint[];
}

/** A minute in which nothing published anything. */
export const NOTHING_PUBLISHED: SimulatedMinute = { requests: [], lambda: new Map(), dataPoints: [] };

/** A metric as an alarm names it, intrinsic values rendered as the simulated account has them. */
export interface MetricDescriptor {
  readonly namespace: string;
  readonly metricName: string;
  readonly dimensions: Readonly<Record<string, string>>;
}

/** A metric none of the simulated requests produce (DynamoDB's, the probe's): its value in a minute, or undefined for no data. */
export type OtherMetrics = (metric: MetricDescriptor, minute: number) => number | undefined;

/** The synthetic probe passes every minute; nothing else beyond the requests publishes data. */
export const PROBE_PASSES: OtherMetrics = (metric) => (metric.metricName === PROBE_METRICS.success ? 1 : undefined);

export interface AlarmModel {
  readonly id: string;
  /** Its construct path in the stack, for people. */
  readonly label: string;
  /** The functions whose deployments it stops and rolls back: empty when it only notifies. */
  readonly rollsBack: readonly ApiFunctionName[];
  readonly properties: Readonly<Record<string, any>>;
}

export interface MinuteVerdict {
  readonly minute: number;
  /** Each alarm's value this minute, by alarm id: undefined for no data. */
  readonly values: ReadonlyMap<string, number | undefined>;
  /** Alarms whose value this minute breached their threshold. */
  readonly breaching: readonly AlarmModel[];
  /** Alarms in ALARM once this minute is evaluated. */
  readonly inAlarm: readonly AlarmModel[];
  /** Functions whose deployment CodeDeploy would now stop and roll back, or refuse to run. */
  readonly rollingBack: readonly ApiFunctionName[];
}

/** How the template moves a function's alias: the new version's canary share and minutes, and whether a bake follows the shift. */
export interface DeploymentSettings {
  readonly canaryShare: number;
  readonly canaryMinutes: number;
  readonly bakeMinutes: number;
  /** The stage sends the new version requests of its own through the alias in the canary and the bake. */
  readonly deploymentTraffic: boolean;
}

/** A function's deployment, start to end, on a stage where `traffic` calls. */
export interface DeploymentPlan {
  readonly function: ApiFunctionName;
  readonly newVersion?: Conduct;
  readonly oldVersion?: Conduct;
  readonly traffic: readonly Traffic[];
  readonly keysTableDown?: boolean;
  readonly petsTableDown?: boolean;
}

/** How a deployment ended: rolled back at a minute by some of its alarms, or not. */
export interface DeploymentOutcome {
  readonly minutes: readonly Minute[];
  readonly simulated: readonly SimulatedMinute[];
  readonly verdicts: readonly MinuteVerdict[];
  /** The first minute its group's alarms stopped it, and those alarms; none when it went through. */
  readonly rollback?: { readonly minute: number; readonly alarms: readonly AlarmModel[] };
  /** Other groups whose rollback alarms fired meanwhile: each would stop a deployment of its own in the same release. */
  readonly alsoStopped: readonly ApiFunctionName[];
}

/** The stage's alarms, metric filters and deployment groups, and the functions behind its routes. */
export class StageAlarms {
  readonly alarms: readonly AlarmModel[];
  private readonly resources: Readonly<Record<string, CfnResourceJson>>;
  private readonly apiId: string;
  private readonly accessLogFormat: string;
  /** The stage's access log format: each field's name and the context variable written into it. */
  private readonly accessLogFields: Readonly<Record<string, string>>;
  private readonly filters: readonly MetricFilter[];
  /** The functions behind the API, by logical id. */
  private readonly functionIds: ReadonlyMap<string, ApiFunctionName>;
  private readonly settings: ReadonlyMap<ApiFunctionName, DeploymentSettings>;

  constructor(template: CfnTemplate) {
    this.resources = template.Resources;
    this.apiId = this.only('AWS::ApiGatewayV2::Api')[0];
    const [, stage] = this.only('AWS::ApiGatewayV2::Stage', (resource) => resource.Properties?.AccessLogSettings !== undefined);
    this.accessLogFormat = stage.Properties!.AccessLogSettings.Format as string;
    this.accessLogFields = JSON.parse(this.accessLogFormat) as Record<string, string>;
    const [accessLogGroup] = refsIn(stage.Properties!.AccessLogSettings.DestinationArn);
    this.filters = this.ofType('AWS::Logs::MetricFilter')
      .filter(([, filter]) => refsIn(filter.Properties!.LogGroupName).includes(accessLogGroup!))
      .flatMap(([, filter]) =>
        (filter.Properties!.MetricTransformations as any[]).map((transformation) => ({
          matches: parseFilterPattern(filter.Properties!.FilterPattern as string),
          namespace: transformation.MetricNamespace as string,
          metricName: transformation.MetricName as string,
          value: transformation.MetricValue as string,
          defaultValue: transformation.DefaultValue as number | undefined,
          dimensions: Object.fromEntries(((transformation.Dimensions ?? []) as any[]).map((d) => [d.Key as string, d.Value as string])),
        })),
      );
    this.functionIds = this.functionsBehindTheApi();

    const rollsBack = new Map<string, ApiFunctionName[]>();
    const settings = new Map<ApiFunctionName, DeploymentSettings>();
    for (const [groupId, group] of this.ofType('AWS::CodeDeploy::DeploymentGroup')) {
      const { fn, alias } = this.deployedBy(groupId);
      settings.set(fn, deploymentSettings(group, alias));
      const configuration = group.Properties!.AlarmConfiguration;
      if (configuration?.Enabled !== true) continue;
      for (const alarm of configuration.Alarms as Array<{ Name: unknown }>) {
        for (const alarmId of refsIn(alarm.Name)) rollsBack.set(alarmId, [...(rollsBack.get(alarmId) ?? []), fn]);
      }
    }
    this.settings = settings;
    this.alarms = this.ofType('AWS::CloudWatch::Alarm').map(([id, alarm]) => ({
      id,
      label: labelOf(id, alarm),
      rollsBack: rollsBack.get(id) ?? [],
      properties: alarm.Properties!,
    }));
  }

  /** The name each function behind the API runs under in the simulated account, which its own metric lines carry. */
  functionNames(): Record<ApiFunctionName, string> {
    return Object.fromEntries([...this.functionIds].map(([id, fn]) => [fn, physicalNameOf(id)])) as Record<ApiFunctionName, string>;
  }

  /** How the template deploys a function. */
  deploymentSettings(fn: ApiFunctionName): DeploymentSettings {
    const found = this.settings.get(fn);
    if (found === undefined) throw new Error(`No deployment group moves ${fn}`);
    return found;
  }

  /** Whether a function reads a table, by the variable of its environment that names it. */
  reads(fn: ApiFunctionName, variable: string): boolean {
    const id = [...this.functionIds].find(([, name]) => name === fn)?.[0];
    return this.resources[id!]?.Properties?.Environment?.Variables?.[variable] !== undefined;
  }

  /** The access log lines, Lambda's invocations and the functions' metric lines of each minute, through the stage's throttle. */
  simulate(stage: Pick<StageConfig, 'throttle' | 'cors'>, minutes: readonly Minute[], signals: BundleSignals): SimulatedMinute[] {
    const simulation = new Simulation(stage, this, signals);
    return minutes.map((minute) => simulation.minute(minute));
  }

  /** A function's deployment as the template runs it: the canary's minutes, then the bake's if it has one. */
  deploymentMinutes(plan: DeploymentPlan): Minute[] {
    const { canaryMinutes, bakeMinutes, deploymentTraffic } = this.deploymentSettings(plan.function);
    const minute = (phase: Phase): Minute => ({
      traffic: plan.traffic,
      deployment: {
        function: plan.function,
        phase,
        newVersion: plan.newVersion ?? 'healthy',
        ...(plan.oldVersion === undefined ? {} : { oldVersion: plan.oldVersion }),
        deploymentTraffic,
      },
      ...(plan.keysTableDown ? { keysTableDown: true } : {}),
      ...(plan.petsTableDown ? { petsTableDown: true } : {}),
    });
    return [...Array.from({ length: canaryMinutes }, () => minute('canary')), ...Array.from({ length: bakeMinutes }, () => minute('bake'))];
  }

  /** Runs a function's deployment minute by minute: whether, when and by which alarms its group stops it. */
  deploy(stage: Pick<StageConfig, 'throttle' | 'cors'>, plan: DeploymentPlan, signals: BundleSignals): DeploymentOutcome {
    const minutes = this.deploymentMinutes(plan);
    const simulated = this.simulate(stage, minutes, signals);
    const verdicts = this.evaluate(simulated);
    const stopped = verdicts.find((verdict) => verdict.rollingBack.includes(plan.function));
    const alsoStopped = [...new Set(verdicts.flatMap((verdict) => verdict.rollingBack))].filter((fn) => fn !== plan.function);
    return {
      minutes,
      simulated,
      verdicts,
      ...(stopped === undefined
        ? {}
        : {
            rollback: { minute: stopped.minute, alarms: stopped.inAlarm.filter((alarm) => alarm.rollsBack.includes(plan.function)) },
          }),
      alsoStopped,
    };
  }

  /** Every alarm's state, minute by minute, over the simulated minutes. */
  evaluate(minutes: readonly SimulatedMinute[], other: OtherMetrics = PROBE_PASSES): MinuteVerdict[] {
    const series = new Map(
      this.alarms.map((alarm) => [alarm.id, minutes.map((_, index) => this.alarmValue(alarm, minutes, index, other))]),
    );
    const states = new Map<string, 'OK' | 'ALARM' | 'INSUFFICIENT_DATA'>(this.alarms.map((alarm) => [alarm.id, 'OK']));
    return minutes.map((_, index) => {
      const breaching: AlarmModel[] = [];
      const values = new Map<string, number | undefined>();
      for (const alarm of this.alarms) {
        const points = series.get(alarm.id)!;
        const value = points[index];
        values.set(alarm.id, value);
        if (value !== undefined && breaches(alarm.properties, value)) breaching.push(alarm);
        states.set(alarm.id, nextState(alarm.properties, points.slice(0, index + 1), states.get(alarm.id)!));
      }
      const inAlarm = this.alarms.filter((alarm) => states.get(alarm.id) === 'ALARM');
      return { minute: index + 1, values, breaching, inAlarm, rollingBack: [...new Set(inAlarm.flatMap((alarm) => alarm.rollsBack))] };
    });
  }

  /** A field of an access log line, by the context variable the stage's format writes into it. */
  private field(line: Readonly<Record<string, unknown>>, variable: string): unknown {
    const key = Object.keys(this.accessLogFields).find((name) => this.accessLogFields[name] === variable);
    if (key === undefined) throw new Error(`The access log format writes no ${variable}`);
    return line[key];
  }

  /** The access log line API Gateway writes for an answer: the stage's format with each context variable it knows, `-` for the rest. */
  accessLogLine(answered: Answered): Record<string, unknown> {
    return accessLogLine(this.accessLogFormat, answered);
  }

  /** The function behind the API whose name a metric's FunctionName carries. */
  private functionNamed(name: string): ApiFunctionName | undefined {
    for (const [id, fn] of this.functionIds) if (physicalNameOf(id) === name) return fn;
    return undefined;
  }

  private alarmValue(alarm: AlarmModel, minutes: readonly SimulatedMinute[], index: number, other: OtherMetrics): number | undefined {
    const p = alarm.properties;
    if (p.Metrics === undefined) {
      return this.metricValue(
        {
          Metric: { Namespace: p.Namespace, MetricName: p.MetricName, Dimensions: p.Dimensions },
          Period: p.Period,
          Stat: p.ExtendedStatistic ?? p.Statistic,
        },
        minutes[index]!,
        index,
        other,
      );
    }
    const queries = new Map((p.Metrics as any[]).map((query) => [query.Id as string, query]));
    const values = new Map<string, number | undefined>();
    const pointOf = (id: string): number | undefined => {
      if (!values.has(id)) {
        const query = queries.get(id);
        if (query === undefined) throw new Error(`${alarm.label}: its math names ${id}, which it does not define`);
        values.set(
          id,
          query.Expression
            ? evaluateExpression(query.Expression, pointOf)
            : this.metricValue(query.MetricStat, minutes[index]!, index, other),
        );
      }
      return values.get(id);
    };
    const returned = (p.Metrics as any[]).filter((query) => query.ReturnData !== false);
    if (returned.length !== 1) throw new Error(`${alarm.label}: an alarm returns one time series, not ${returned.length}`);
    return pointOf(returned[0].Id);
  }

  private metricValue(stat: any, minute: SimulatedMinute, index: number, other: OtherMetrics): number | undefined {
    if (stat.Period !== 60) throw new Error(`Only one-minute periods are simulated, not ${stat.Period} s`);
    const descriptor: MetricDescriptor = {
      namespace: stat.Metric.Namespace,
      metricName: stat.Metric.MetricName,
      dimensions: Object.fromEntries(((stat.Metric.Dimensions ?? []) as any[]).map((d) => [d.Name as string, this.render(d.Value)])),
    };
    return statistic(stat.Stat as string, this.samples(descriptor, minute) ?? samplesOf(other(descriptor, index)));
  }

  /** The data points the simulated minute gives a metric, or undefined when nothing simulated publishes it. */
  private samples({ namespace, metricName, dimensions }: MetricDescriptor, minute: SimulatedMinute): Sample[] | undefined {
    const keys = Object.keys(dimensions);
    const filter = this.filters.find(
      (f) => f.namespace === namespace && f.metricName === metricName && sameKeys(Object.keys(f.dimensions), keys),
    );
    if (filter) {
      const matching = minute.requests.filter(
        ({ line }) => filter.matches(line) && keys.every((key) => String(select(line, filter.dimensions[key]!)) === dimensions[key]),
      );
      const samples = matching.map(({ line, count }) => ({
        value: Number(filter.value.startsWith('$.') ? select(line, filter.value) : filter.value),
        weight: count,
      }));
      // CloudWatch reports the default value for a period in which lines came in and none matched.
      if (samples.length === 0 && filter.defaultValue !== undefined && minute.requests.length > 0 && keys.length === 0)
        return [{ value: filter.defaultValue, weight: 1 }];
      return samples;
    }
    if (namespace === 'AWS/ApiGateway' && dimensions.ApiId === physicalNameOf(this.apiId) && keys.length === 1) {
      const status = (line: Readonly<Record<string, unknown>>) => Number(this.field(line, '$context.status'));
      const per = (value: (line: Readonly<Record<string, unknown>>) => number) =>
        minute.requests.map(({ line, count }) => ({ value: value(line), weight: count }));
      switch (metricName) {
        case 'Count':
          return per(() => 1);
        case '4xx':
          return per((line) => (status(line) >= 400 && status(line) < 500 ? 1 : 0));
        case '5xx':
          return per((line) => (status(line) >= 500 ? 1 : 0));
        case 'Latency':
          return per((line) => Number(this.field(line, '$context.responseLatency')));
      }
    }
    if (namespace === 'AWS/Lambda' && dimensions.FunctionName !== undefined) return this.lambdaSamples(metricName, dimensions, minute);
    const points = minute.dataPoints.filter(
      (point) =>
        point.namespace === namespace &&
        point.metricName === metricName &&
        sameKeys(Object.keys(point.dimensions), keys) &&
        keys.every((key) => point.dimensions[key] === dimensions[key]),
    );
    return points.length === 0 ? undefined : points.map((point) => ({ value: point.value, weight: point.count }));
  }

  /**
   * Lambda's metrics of a function behind the API, by the dimension sets Lambda publishes for alias invocations:
   * {FunctionName} (every version), {FunctionName, Resource=<fn>:live} (every version through the alias), and
   * {FunctionName, Resource, ExecutedVersion} (one version). Nothing for a minute the selected versions did not run.
   */
  private lambdaSamples(metricName: string, dimensions: Readonly<Record<string, string>>, minute: SimulatedMinute): Sample[] | undefined {
    const fn = this.functionNamed(dimensions.FunctionName!);
    if (fn === undefined) return undefined;
    const { Resource: resource, ExecutedVersion: executed, ...rest } = dimensions;
    if (Object.keys(rest).length !== 1) return undefined;
    if (resource !== undefined && resource !== `${dimensions.FunctionName}:live`) return [];
    if (executed !== undefined && resource === undefined) return undefined;
    const runs = [...(minute.lambda.get(fn) ?? new Map<string, VersionRun>())]
      .filter(([version]) => executed === undefined || version === executed)
      .map(([, run]) => run)
      .filter((run) => run.invocations > 0);
    if (runs.length === 0) return [];
    const total = (of: (run: VersionRun) => number) => runs.reduce((sum, run) => sum + of(run), 0);
    switch (metricName) {
      case 'Invocations':
        return [{ value: total((run) => run.invocations), weight: 1 }];
      case 'Errors':
        return [{ value: total((run) => run.errors), weight: 1 }];
      case 'Throttles':
        return [{ value: 0, weight: 1 }];
      case 'Duration':
        return runs.flatMap((run) => [...run.durations].map(([value, weight]) => ({ value, weight })));
      default:
        return undefined;
    }
  }

  /** A dimension value as the simulated account has it: a Ref is the resource's name, a Version's number is the new version's. */
  private render(value: unknown): string {
    if (typeof value === 'string') return value;
    const record = value as Record<string, unknown>;
    if (typeof record.Ref === 'string') return physicalNameOf(record.Ref);
    if (Array.isArray(record['Fn::Join'])) {
      const [separator, parts] = record['Fn::Join'] as [string, unknown[]];
      return parts.map((part) => this.render(part)).join(separator);
    }
    if (Array.isArray(record['Fn::GetAtt'])) {
      const [id, attribute] = record['Fn::GetAtt'] as [string, string];
      if (this.resources[id]?.Type === 'AWS::Lambda::Version' && attribute === 'Version') return VERSIONS.new;
      return `${physicalNameOf(id)}.${attribute}`;
    }
    throw new Error(`Cannot render dimension value ${JSON.stringify(value)}`);
  }

  /** Route functions by the route they serve, the authorizer by the API's authorizer: through their aliases. */
  private functionsBehindTheApi(): Map<string, ApiFunctionName> {
    const functionOfAlias = (aliasId: string) => refsIn(this.resources[aliasId]?.Properties?.FunctionName)[0];
    const found = new Map<string, ApiFunctionName>();
    for (const [, route] of this.ofType('AWS::ApiGatewayV2::Route')) {
      const key = route.Properties!.RouteKey as string;
      const name: ApiFunctionName | undefined = key === '$default' ? 'routeNotFound' : routes.find((r) => routeKey(r) === key)?.operationId;
      const integration = refsIn(route.Properties!.Target).find((id) => this.resources[id]?.Type === 'AWS::ApiGatewayV2::Integration');
      const alias = refsIn(this.resources[integration!]?.Properties?.IntegrationUri)[0];
      const fn = alias && functionOfAlias(alias);
      if (name && fn) found.set(fn, name);
    }
    for (const [, authorizer] of this.ofType('AWS::ApiGatewayV2::Authorizer')) {
      const alias = refsIn(authorizer.Properties!.AuthorizerUri).find((id) => this.resources[id]?.Type === 'AWS::Lambda::Alias');
      const fn = alias && functionOfAlias(alias);
      if (fn) found.set(fn, 'authorizer');
    }
    return found;
  }

  /** The function whose alias a deployment group moves, and that alias. */
  private deployedBy(groupId: string): { fn: ApiFunctionName; alias: CfnResourceJson } {
    const alias = this.ofType('AWS::Lambda::Alias').find(([, resource]) =>
      refsIn((resource as any).UpdatePolicy?.CodeDeployLambdaAliasUpdate?.DeploymentGroupName).includes(groupId),
    );
    const fn = alias && refsIn(alias[1].Properties!.FunctionName)[0];
    const name = fn === undefined ? undefined : this.functionIds.get(fn);
    if (name === undefined) throw new Error(`Deployment group ${groupId} moves no alias of a function behind the API`);
    return { fn: name, alias: alias![1] };
  }

  private ofType(type: string): Array<[string, CfnResourceJson]> {
    return Object.entries(resourcesOfType({ Resources: this.resources }, type));
  }

  private only(type: string, where: (resource: CfnResourceJson) => boolean = () => true): [string, CfnResourceJson] {
    const found = this.ofType(type).filter(([, resource]) => where(resource));
    if (found.length !== 1) throw new Error(`Expected one ${type}, found ${found.length}`);
    return found[0]!;
  }
}

/**
 * A deployment group's canary, read from its deployment configuration (CodeDeployDefault.LambdaCanary<p>Percent<m>Minutes,
 * or all at once), and its bake: an AfterAllowTraffic hook on the alias is the deployment traffic function, which sends
 * the new version requests in the canary and the bake and holds a canary's deployment open BAKE_MINUTES after the
 * shift; an all-at-once deployment (an emergency release, polling no alarm) it lets end at once.
 */
function deploymentSettings(group: CfnResourceJson, alias: CfnResourceJson): DeploymentSettings {
  const config = group.Properties!.DeploymentConfigName as string;
  const canary = /LambdaCanary(\d+)Percent(\d+)Minutes$/.exec(config);
  if (canary === null && !config.endsWith('LambdaAllAtOnce')) throw new Error(`Deployment configuration ${config} is not simulated`);
  const baked = (alias as any).UpdatePolicy?.CodeDeployLambdaAliasUpdate?.AfterAllowTrafficHook !== undefined;
  return {
    canaryShare: canary === null ? 1 : Number(canary[1]) / 100,
    canaryMinutes: canary === null ? 0 : Number(canary[2]),
    bakeMinutes: baked && canary !== null ? BAKE_MINUTES : 0,
    deploymentTraffic: baked && canary !== null,
  };
}

interface MetricFilter {
  readonly matches: (line: Readonly<Record<string, unknown>>) => boolean;
  readonly namespace: string;
  readonly metricName: string;
  readonly value: string;
  readonly defaultValue: number | undefined;
  readonly dimensions: Readonly<Record<string, string>>;
}

// ---- The requests of a minute, through the stage's throttle and each function's versions ----

/** What the house authorizer tells the route for each caller (shared/domain/auth/authenticate.ts). */
const VERDICT: Readonly<Record<Caller, string>> = {
  'no key': 'missing',
  'malformed key': 'invalid',
  'unknown key': 'invalid',
  'revoked key': 'invalid',
  'valid key': 'allowed',
  'valid key with an expiry': 'allowed',
};

/** The authorizer's verdicts a deployment judges it by, as the status the route answers them with. */
const JUDGED_VERDICTS: Readonly<Record<string, string>> = { invalid: '401', unavailable: '503' };

/** A missing or malformed key is refused before any lookup; any other needs the keys table. */
const looksUp = (caller: Caller) => caller !== 'no key' && caller !== 'malformed key';

/** The deployment's requests through a function's alias every minute (shared/facts/deployment.ts). */
export const DEPLOYMENT_REQUESTS_PER_MINUTE = 60_000 / TRAFFIC_INTERVAL_MS;

/** How long a healthy invocation runs: far from any timeout. */
const DURATION_MS = 20;
/** What API Gateway adds to the functions' time in its latency. */
const GATEWAY_MS = 10;

/** A request as API Gateway knows it when it writes the access log line. */
export interface Answered {
  readonly route: ThrottledRoute;
  readonly status: number;
  /** The context the authorizer answered with; none when API Gateway refused the request before invoking it (429). */
  readonly authorizer?: Readonly<Record<string, unknown>>;
  /** The authorizer failed: API Gateway answered 500 without invoking the route. */
  readonly authorizerFailed?: boolean;
  /** The route's function failed: API Gateway answered 500. */
  readonly functionError?: boolean;
  readonly authorizerMs?: number;
  readonly integrationMs?: number;
}

/** A version of a function serving part of a request stream. */
interface VersionPart {
  readonly version: string;
  readonly count: number;
  readonly behaviour: Behaviour;
}

/** One simulation's minutes, in order: shares that do not divide a minute's count carry over to the next. */
class Simulation {
  private readonly carried = new Map<string, number>();
  private readonly parsed = new Map<string, Omit<DataPoint, 'count'>[]>();
  private requests = new Map<string, { answer: Answered; count: number }>();
  private lambda = new Map<ApiFunctionName, Map<string, { invocations: number; errors: number; durations: Map<number, number> }>>();
  private dataPoints = new Map<string, DataPoint>();
  /** A rate fault's budget left this minute, by function and version. */
  private budgets = new Map<string, number>();

  constructor(
    private readonly stage: Pick<StageConfig, 'throttle' | 'cors'>,
    private readonly template: StageAlarms,
    private readonly signals: BundleSignals,
  ) {}

  minute(minute: Minute): SimulatedMinute {
    this.requests = new Map();
    this.lambda = new Map();
    this.dataPoints = new Map();
    this.budgets = new Map();
    for (const route of throttledRoutes(this.stage)) {
      const traffic = minute.traffic.filter((t) => t.route === route);
      const offered = traffic.reduce((sum, t) => sum + Math.round(t.perSecond * 60), 0);
      // A route's share is a steady rate per second: over a minute it admits the rate's worth and answers the rest 429.
      const admittedShare = offered === 0 ? 0 : Math.min(1, (this.stage.throttle[route].rateLimit * 60) / offered);
      for (const t of traffic) {
        const stream = `${route} ${t.caller} ${t.refused ?? ''}`;
        const count = Math.round(t.perSecond * 60);
        const admitted = this.take(`admitted ${stream}`, count, admittedShare);
        if (count > admitted) this.log({ route, status: 429 }, count - admitted);
        if (admitted > 0) this.throughTheApi(minute, route, t, admitted, stream);
      }
    }
    const { deployment } = minute;
    if (deployment?.deploymentTraffic) this.deploymentTraffic(minute, deployment);
    return {
      requests: [...this.requests.values()].map(({ answer, count }) => ({ line: this.template.accessLogLine(answer), count })),
      lambda: this.lambda,
      dataPoints: [...this.dataPoints.values()],
    };
  }

  /** Requests API Gateway admitted: the authorizer's verdict, then the route's function, each by the versions serving it. */
  private throughTheApi(minute: Minute, route: ThrottledRoute, t: Traffic, admitted: number, stream: string): void {
    const fn: ApiFunctionName = route === 'preflight' ? 'routeNotFound' : route;
    if (route === 'preflight') {
      // Unauthenticated by design (shared/http/handler.ts): no authorizer, and the function answers 204.
      for (const part of this.parts(minute, fn, admitted, `${stream} route`, (b) => b === 'crashes' || b.startsWith('slow'))) {
        const crashed = part.behaviour === 'crashes';
        const ms = this.invoke(fn, part, crashed);
        this.log({ route, status: crashed ? 500 : 204, integrationMs: ms, ...(crashed ? { functionError: true } : {}) }, part.count);
      }
      return;
    }
    for (const byAuthorizer of this.parts(minute, 'authorizer', admitted, `${stream} authorizer`, (b) =>
      concernsCaller(b, t.caller, minute),
    )) {
      const failed = byAuthorizer.behaviour === 'crashes';
      const authorizerMs = this.invoke('authorizer', byAuthorizer, failed);
      if (failed) {
        this.log({ route, status: 500, authorizerFailed: true, authorizerMs }, byAuthorizer.count);
        continue;
      }
      const outcome = verdictOf(t.caller, byAuthorizer.behaviour, minute);
      const authorizer = this.authorizerContext(byAuthorizer.version, outcome);
      const request: RouteRequest = { accepted: outcome === 'allowed', refusal: outcome, ...(t.refused ? { refused: t.refused } : {}) };
      for (const byRoute of this.parts(
        minute,
        fn,
        byAuthorizer.count,
        `${stream} ${byAuthorizer.version} ${byAuthorizer.behaviour} route`,
        (b) => concernsRequest(b, request),
      )) {
        const answer = this.answer(minute, fn, byRoute, request);
        this.log(
          {
            route,
            status: answer.status,
            authorizer,
            authorizerMs,
            integrationMs: answer.ms,
            ...(answer.crashed ? { functionError: true } : {}),
          },
          byRoute.count,
        );
      }
    }
  }

  /** The deployment's own requests, straight to the function's alias: no access log line, no authorizer before a route. */
  private deploymentTraffic(minute: Minute, deployment: Deployment): void {
    const fn = deployment.function;
    const cycle = this.signals.deploymentTraffic[fn];
    if (cycle === undefined || cycle.length === 0) throw new Error(`The signals hold no deployment traffic of ${fn}`);
    cycle.forEach((request, index) => {
      const count = this.take(`deployment ${fn} ${index}`, DEPLOYMENT_REQUESTS_PER_MINUTE, 1 / cycle.length);
      const stream = `deployment ${fn} ${index}`;
      if (fn === 'authorizer') {
        for (const part of this.parts(minute, fn, count, stream, (b) => concernsCaller(b, request.caller, minute))) {
          const crashed = part.behaviour === 'crashes';
          this.invoke(fn, part, crashed);
          // No access log sees these verdicts: the deployment traffic counts the judged ones itself, by the version that gave them.
          const status = JUDGED_VERDICTS[verdictOf(request.caller, part.behaviour, minute)];
          if (crashed || status === undefined) continue;
          const lines = this.signals.deploymentTrafficCounts[part.version]?.[status];
          if (lines === undefined)
            throw new Error(`The signals hold no line of the deployment traffic for version ${part.version}'s ${status}`);
          for (const line of lines) for (const point of this.dataPointsOf(line)) this.count(point, part.count);
        }
        return;
      }
      const routeRequest: RouteRequest = { accepted: true, refusal: 'allowed', ...(request.refused ? { refused: request.refused } : {}) };
      for (const part of this.parts(minute, fn, count, stream, (b) => concernsRequest(b, routeRequest))) {
        this.answer(minute, fn, part, routeRequest);
      }
    });
  }

  /** A route function version's answer to an admitted request, with its invocation counted and its metric lines written. */
  private answer(
    minute: Minute,
    fn: ApiFunctionName,
    part: VersionPart,
    request: RouteRequest,
  ): { status: number; ms: number; crashed: boolean } {
    const crashed = part.behaviour === 'crashes';
    const ms = this.invoke(fn, part, crashed);
    if (crashed) return { status: 500, ms, crashed };
    const status = routeStatus(fn, part.behaviour, request, minute.petsTableDown === true && this.template.reads(fn, ENV.petsTable));
    // Only answers to a caller the authorizer accepted are the version's own (shared/http/handler.ts): it writes lines for them.
    if (request.accepted) {
      const lines = this.signals.answers[fn]?.[part.version]?.[String(status)];
      if (lines === undefined) throw new Error(`The signals hold no line of ${fn} version ${part.version} answering ${status}`);
      for (const line of lines) for (const point of this.dataPointsOf(line)) this.count(point, part.count);
    }
    return { status, ms, crashed };
  }

  /** The context an authorizer version answers with for a verdict, as its bundle answered it. */
  private authorizerContext(version: string, outcome: string): Readonly<Record<string, unknown>> {
    const context = this.signals.authorizer[version]?.[outcome];
    if (context === undefined) throw new Error(`The signals hold no ${outcome} verdict of the authorizer's version ${version}`);
    return context;
  }

  /**
   * The versions serving `count` requests of a function's alias, each with what it does to them: the template's version
   * alone while the function is not deployed, the new one on the canary's share and the old one on the rest, or the new
   * one alone in the bake. A fault at a rate falls on its share of the requests it concerns.
   */
  private parts(
    minute: Minute,
    fn: ApiFunctionName,
    count: number,
    stream: string,
    concerns: (behaviour: Behaviour) => boolean,
  ): VersionPart[] {
    const { deployment } = minute;
    const versions: Array<{ version: string; count: number; conduct: Conduct }> = [];
    if (deployment?.function !== fn) versions.push({ version: VERSIONS.new, count, conduct: 'healthy' });
    else {
      const share = deployment.phase === 'bake' ? 1 : this.template.deploymentSettings(fn).canaryShare;
      const toNew = this.take(`${stream} new`, count, share);
      versions.push({ version: VERSIONS.new, count: toNew, conduct: deployment.newVersion });
      versions.push({ version: VERSIONS.old, count: count - toNew, conduct: deployment.oldVersion ?? 'healthy' });
    }
    return versions.flatMap(({ version, count: served, conduct }) => {
      if (served === 0) return [];
      const { behaviour, share, perMinute } = conductIn(conduct, deployment?.phase);
      if (behaviour === 'healthy' || !concerns(behaviour)) return [{ version, count: served, behaviour: 'healthy' as const }];
      let affected = served;
      if (share !== undefined) affected = this.take(`${stream} ${version} fault`, served, share);
      if (perMinute !== undefined) {
        const budget = `${fn} ${version}`;
        affected = Math.min(served, this.budgets.get(budget) ?? perMinute);
        this.budgets.set(budget, (this.budgets.get(budget) ?? perMinute) - affected);
      }
      return [
        { version, count: affected, behaviour },
        { version, count: served - affected, behaviour: 'healthy' as const },
      ].filter((part) => part.count > 0);
    });
  }

  /** Counts a version's invocations as Lambda does, and returns how long each took. */
  private invoke(fn: ApiFunctionName, part: VersionPart, failed: boolean): number {
    const ms = part.behaviour === 'slow ×10' ? DURATION_MS * 10 : part.behaviour === 'slow +1 s' ? DURATION_MS + 1_000 : DURATION_MS;
    const versions = this.lambda.get(fn) ?? new Map();
    this.lambda.set(fn, versions);
    const run = versions.get(part.version) ?? { invocations: 0, errors: 0, durations: new Map<number, number>() };
    versions.set(part.version, run);
    run.invocations += part.count;
    if (failed) run.errors += part.count;
    run.durations.set(ms, (run.durations.get(ms) ?? 0) + part.count);
    return ms;
  }

  private log(answer: Answered, count: number): void {
    if (count <= 0) return;
    const key = JSON.stringify(answer);
    this.requests.set(key, { answer, count: (this.requests.get(key)?.count ?? 0) + count });
  }

  private count(point: Omit<DataPoint, 'count'>, count: number): void {
    const key = JSON.stringify(point);
    this.dataPoints.set(key, { ...point, count: (this.dataPoints.get(key)?.count ?? 0) + count });
  }

  private dataPointsOf(line: string): Omit<DataPoint, 'count'>[] {
    let points = this.parsed.get(line);
    if (points === undefined) {
      points = emfDataPoints(line);
      this.parsed.set(line, points);
    }
    return points;
  }

  /**
   * `share` of `total`, in whole requests: what a stream loses to rounding one minute it gets the next, so over
   * minutes each version gets its share, as Lambda's weighted alias and API Gateway's steady rate give it.
   */
  private take(stream: string, total: number, share: number): number {
    if (share >= 1) return total;
    if (share <= 0 || total === 0) return 0;
    const before = this.carried.get(stream) ?? 0;
    const after = before + total * share;
    this.carried.set(stream, after);
    return Math.min(total, Math.floor(after + 1e-9) - Math.floor(before + 1e-9));
  }
}

/** What a route request is to its function: whether its caller was accepted, the verdict otherwise, and what every version answers it. */
interface RouteRequest {
  readonly accepted: boolean;
  /** The authorizer's verdict, which the route turns into its answer when it is not `allowed`. */
  readonly refusal: string;
  readonly refused?: 400 | 404;
}

/** The behaviour a conduct has in a phase, and on how much. */
function conductIn(conduct: Conduct, phase: Phase | undefined): { behaviour: Behaviour; share?: number; perMinute?: number } {
  if (typeof conduct === 'string') return { behaviour: conduct };
  if ('afterTheShift' in conduct) return { behaviour: phase === 'bake' ? conduct.afterTheShift : 'healthy' };
  return {
    behaviour: conduct.behaviour,
    ...(conduct.share === undefined ? {} : { share: conduct.share }),
    ...(conduct.perMinute === undefined ? {} : { perMinute: conduct.perMinute }),
  };
}

const AUTHORIZER_BEHAVIOURS: readonly Behaviour[] = [
  'crashes',
  'slow ×10',
  'slow +1 s',
  'store unavailable',
  'refuses valid keys',
  'refuses keys without an expiry',
];

/** Whether an authorizer behaviour touches a caller's request. */
function concernsCaller(behaviour: Behaviour, caller: Caller, minute: Minute): boolean {
  if (!AUTHORIZER_BEHAVIOURS.includes(behaviour)) throw new Error(`Not simulated: an authorizer that ${behaviour}`);
  switch (behaviour) {
    case 'store unavailable':
      return looksUp(caller) && !minute.keysTableDown;
    case 'refuses valid keys':
      return VERDICT[caller] === 'allowed' && !minute.keysTableDown;
    case 'refuses keys without an expiry':
      return caller === 'valid key' && !minute.keysTableDown;
    default:
      return true;
  }
}

/** The authorizer's verdict on a caller's key, by what its version does. */
function verdictOf(caller: Caller, behaviour: Behaviour, minute: Minute): string {
  if (looksUp(caller) && (minute.keysTableDown || behaviour === 'store unavailable')) return 'unavailable';
  if (behaviour === 'refuses valid keys' || behaviour === 'refuses keys without an expiry') return 'invalid';
  return VERDICT[caller];
}

const ROUTE_BEHAVIOURS: readonly Behaviour[] = [
  'crashes',
  'answers 500',
  'store unavailable',
  'answers 404 for existing pets',
  'answers 400 to valid bodies',
  'refuses accepted keys',
  'slow ×10',
  'slow +1 s',
];

/** Whether a route function's behaviour touches a request: a crash or a slowdown every one, the rest only what it answers on its own. */
function concernsRequest(behaviour: Behaviour, request: RouteRequest): boolean {
  if (!ROUTE_BEHAVIOURS.includes(behaviour)) throw new Error(`Not simulated: a route function that ${behaviour}`);
  switch (behaviour) {
    case 'crashes':
    case 'slow ×10':
    case 'slow +1 s':
      return true;
    case 'refuses accepted keys':
      return request.accepted;
    default:
      return request.accepted && request.refused === undefined;
  }
}

/** The success a route answers an accepted, valid request: routeNotFound's is the 404 it exists to give. */
function successOf(fn: ApiFunctionName): number {
  return routes.find((r) => r.operationId === fn)?.successStatus ?? 404;
}

/** What a route function's version answers a request it did not crash on (shared/http/handler.ts). */
function routeStatus(fn: ApiFunctionName, behaviour: Behaviour, request: RouteRequest, storeDown: boolean): number {
  if (!request.accepted) return request.refusal === 'unavailable' ? 503 : 401;
  if (behaviour === 'refuses accepted keys') return 401;
  if (request.refused !== undefined) return request.refused;
  if (storeDown) return 503;
  switch (behaviour) {
    case 'answers 500':
      return 500;
    case 'store unavailable':
      return 503;
    case 'answers 404 for existing pets':
      if (fn !== 'getPet') throw new Error(`Not simulated: ${fn} answering 404 for existing pets`);
      return 404;
    case 'answers 400 to valid bodies':
      if (fn !== 'createPet') throw new Error(`Not simulated: ${fn} answering 400 to valid bodies`);
      return 400;
    default:
      return successOf(fn);
  }
}

/** The access log line API Gateway writes for a request: the stage's format with each context variable it knows, `-` for the rest. */
function accessLogLine(format: string, a: Answered): Record<string, unknown> {
  const key =
    a.route === 'routeNotFound'
      ? '$default'
      : a.route === 'preflight'
        ? preflightRoute.routeKey
        : routeKey(routes.find((r) => r.operationId === a.route)!);
  const [method, path] = key === '$default' ? ['GET', '/wp-login.php'] : key.split(' ');
  const invoked = a.integrationMs !== undefined;
  const context: Record<string, string> = {
    '$context.requestId': 'simulated',
    '$context.httpMethod': method!,
    '$context.path': path!,
    '$context.routeKey': key,
    '$context.status': String(a.status),
    '$context.protocol': 'HTTP/1.1',
    '$context.responseLatency': String(a.status === 429 ? 1 : (a.authorizerMs ?? 0) + (a.integrationMs ?? 0) + GATEWAY_MS),
    ...(a.status === 429 ? { '$context.error.message': 'Too Many Requests' } : {}),
    ...(a.authorizerFailed
      ? { '$context.error.message': 'Internal Server Error', '$context.authorizer.error': 'The authorizer failed' }
      : {}),
    // Each `$context.authorizer.<key>` is the key of the context the authorizer answered with.
    ...Object.fromEntries(Object.entries(a.authorizer ?? {}).map(([name, value]) => [`$context.authorizer.${name}`, String(value)])),
    ...(invoked
      ? {
          '$context.integrationStatus': String(a.functionError ? 200 : a.status),
          '$context.integrationLatency': String(a.integrationMs),
          ...(a.functionError ? { '$context.integrationErrorMessage': 'The Lambda function returned an error' } : {}),
        }
      : {}),
  };
  const template = JSON.parse(format) as Record<string, string>;
  return Object.fromEntries(Object.entries(template).map(([name, variable]) => [name, context[variable] ?? '-']));
}

// ---- CloudWatch embedded metric format ----

/**
 * The data points one EMF line gives (CloudWatch's embedded metric format): every dimension set of each directive
 * times each of its metrics, the values read from the line's own members. A line that is not EMF gives none.
 */
export function emfDataPoints(line: string): Omit<DataPoint, 'count'>[] {
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return [];
  }
  const directives = (document._aws as { CloudWatchMetrics?: unknown } | undefined)?.CloudWatchMetrics;
  if (!Array.isArray(directives)) return [];
  return directives.flatMap((directive: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string }[] }) =>
    directive.Dimensions.flatMap((names) =>
      directive.Metrics.map((metric) => {
        const value = document[metric.Name];
        if (typeof value !== 'number') throw new Error(`EMF line without a number for ${metric.Name}: ${line}`);
        return {
          namespace: directive.Namespace,
          metricName: metric.Name,
          dimensions: Object.fromEntries(names.map((name) => [name, String(document[name])])),
          value,
        };
      }),
    ),
  );
}

// ---- CloudWatch Logs' JSON filter patterns ----

type LineMatcher = (line: Readonly<Record<string, unknown>>) => boolean;

/**
 * A JSON filter pattern (`{ ($.a = "x") && ($.b != "y") || ... }`) as a predicate on a parsed line: string
 * comparisons with `*` wildcards, numeric comparisons on JSON numbers, `&&`, `||` and parentheses. A
 * missing selector matches no comparison. A numeric comparison on a string value throws, as its meaning
 * in CloudWatch is not modelled here: compare against a quoted string instead.
 */
export function parseFilterPattern(pattern: string): LineMatcher {
  const source = pattern.trim();
  if (!source.startsWith('{') || !source.endsWith('}')) throw new Error(`Not a JSON filter pattern: ${pattern}`);
  const tokens = source.slice(1, -1).match(/"(?:[^"\\]|\\.)*"|&&|\|\||!=|<=|>=|[=<>()]|[^\s=<>()!&|"]+/g) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  const next = () => {
    const token = tokens[position++];
    if (token === undefined) throw new Error(`Filter pattern ends early: ${pattern}`);
    return token;
  };
  const or = (): LineMatcher => {
    let left = and();
    while (peek() === '||') {
      next();
      const [a, b] = [left, and()];
      left = (line) => a(line) || b(line);
    }
    return left;
  };
  const and = (): LineMatcher => {
    let left = term();
    while (peek() === '&&') {
      next();
      const [a, b] = [left, term()];
      left = (line) => a(line) && b(line);
    }
    return left;
  };
  const term = (): LineMatcher => {
    if (peek() === '(') {
      next();
      const inner = or();
      if (next() !== ')') throw new Error(`Unbalanced parentheses in ${pattern}`);
      return inner;
    }
    const selector = next();
    if (!selector.startsWith('$.')) throw new Error(`Expected a selector in ${pattern}, found ${selector}`);
    const operator = next();
    const raw = next();
    return comparison(selector, operator, raw, pattern);
  };
  const matcher = or();
  if (position !== tokens.length) throw new Error(`Unexpected ${tokens[position]} in ${pattern}`);
  return matcher;
}

function comparison(selector: string, operator: string, raw: string, pattern: string): LineMatcher {
  const quoted = raw.startsWith('"');
  const numeric = !quoted && /^-?\d+(\.\d+)?$/.test(raw);
  if (numeric) {
    const expected = Number(raw);
    return (line) => {
      const value = select(line, selector);
      if (value === undefined) return false;
      if (typeof value !== 'number')
        throw new Error(`${pattern} compares ${selector} as a number, but the line has ${JSON.stringify(value)}`);
      return compare(value, operator, expected);
    };
  }
  if (operator !== '=' && operator !== '!=') throw new Error(`${pattern}: ${operator} takes a number`);
  const text = quoted ? (JSON.parse(raw) as string) : raw;
  const wildcard = new RegExp(`^${text.split('*').map(escapeRegExp).join('.*')}$`);
  return (line) => {
    const value = select(line, selector);
    if (value === undefined) return false;
    return wildcard.test(String(value)) === (operator === '=');
  };
}

function select(line: Readonly<Record<string, unknown>>, selector: string): unknown {
  return selector
    .slice(2)
    .split('.')
    .reduce<unknown>(
      (value, key) => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined),
      line,
    );
}

function compare(a: number, operator: string, b: number): boolean {
  switch (operator) {
    case '=':
      return a === b;
    case '!=':
      return a !== b;
    case '<':
      return a < b;
    case '<=':
      return a <= b;
    case '>':
      return a > b;
    case '>=':
      return a >= b;
    default:
      throw new Error(`Unknown comparison ${operator}`);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

// ---- CloudWatch metric math, one data point at a time ----

/**
 * Evaluates a metric math expression for one period: `+ - * /`, comparisons (1 or 0), AND/&&, OR/||,
 * IF(cond, a[, b]) and FILL(x, value). A missing data point makes every expression over it missing
 * (FILL replaces it), as CloudWatch leaves out a timestamp one of the series lacks; so does a division by zero.
 * Functions over a whole series (RATE, DIFF, SEARCH...) throw.
 */
export function evaluateExpression(expression: string, pointOf: (id: string) => number | undefined): number | undefined {
  const tokens = expression.match(/\d+(?:\.\d+)?|[A-Za-z_][A-Za-z0-9_]*|&&|\|\||>=|<=|==|!=|[-+*/(),<>]/g) ?? [];
  let position = 0;
  const peek = () => tokens[position];
  const next = () => {
    const token = tokens[position++];
    if (token === undefined) throw new Error(`Expression ends early: ${expression}`);
    return token;
  };
  type Value = number | undefined;
  const both = (a: Value, b: Value, f: (x: number, y: number) => number | undefined): Value =>
    a === undefined || b === undefined ? undefined : f(a, b);
  const binary = (operand: () => Value, operators: Record<string, (x: number, y: number) => number | undefined>) => (): Value => {
    let left = operand();
    while (peek() !== undefined && operators[peek()!.toUpperCase()] !== undefined) {
      const apply = operators[next().toUpperCase()]!;
      left = both(left, operand(), apply);
    }
    return left;
  };
  const bool = (b: boolean) => (b ? 1 : 0);
  const primary = (): Value => {
    const token = next();
    if (token === '(') {
      const inner = or();
      if (next() !== ')') throw new Error(`Unbalanced parentheses in ${expression}`);
      return inner;
    }
    if (token === '-') {
      const value = primary();
      return value === undefined ? undefined : -value;
    }
    if (/^\d/.test(token)) return Number(token);
    if (peek() !== '(') return pointOf(token);
    next();
    const args: Value[] = [];
    while (peek() !== ')') {
      args.push(or());
      if (peek() === ',') next();
    }
    next();
    switch (token.toUpperCase()) {
      case 'FILL':
        return args[0] ?? args[1];
      case 'IF':
        return args[0] === undefined ? undefined : args[0] !== 0 ? args[1] : args[2];
      default:
        throw new Error(`${token} is not simulated (in ${expression})`);
    }
  };
  const product = binary(primary, { '*': (x, y) => x * y, '/': (x, y) => (y === 0 ? undefined : x / y) });
  const sum = binary(product, { '+': (x, y) => x + y, '-': (x, y) => x - y });
  const comparisonOf = binary(sum, {
    '>=': (x, y) => bool(x >= y),
    '<=': (x, y) => bool(x <= y),
    '>': (x, y) => bool(x > y),
    '<': (x, y) => bool(x < y),
    '==': (x, y) => bool(x === y),
    '!=': (x, y) => bool(x !== y),
  });
  const and = binary(comparisonOf, { AND: (x, y) => bool(x !== 0 && y !== 0), '&&': (x, y) => bool(x !== 0 && y !== 0) });
  const or = binary(and, { OR: (x, y) => bool(x !== 0 || y !== 0), '||': (x, y) => bool(x !== 0 || y !== 0) });
  const value = or();
  if (position !== tokens.length) throw new Error(`Unexpected ${tokens[position]} in ${expression}`);
  return value;
}

// ---- Statistics and alarm states ----

interface Sample {
  readonly value: number;
  readonly weight: number;
}

function samplesOf(value: number | undefined): Sample[] {
  return value === undefined ? [] : [{ value, weight: 1 }];
}

/** A statistic of one period's data points; undefined when there are none. */
function statistic(stat: string, samples: readonly Sample[]): number | undefined {
  const present = samples.filter((sample) => sample.weight > 0);
  if (present.length === 0) return undefined;
  const total = present.reduce((sum, s) => sum + s.weight, 0);
  const percentile = /^p(\d+(?:\.\d+)?)$/.exec(stat);
  if (percentile) {
    const rank = (Number(percentile[1]) / 100) * total;
    let seen = 0;
    for (const sample of [...present].sort((a, b) => a.value - b.value)) {
      seen += sample.weight;
      if (seen >= rank) return sample.value;
    }
    return Math.max(...present.map((s) => s.value));
  }
  switch (stat) {
    case 'Sum':
      return present.reduce((sum, s) => sum + s.value * s.weight, 0);
    case 'SampleCount':
      return total;
    case 'Average':
      return present.reduce((sum, s) => sum + s.value * s.weight, 0) / total;
    case 'Maximum':
      return Math.max(...present.map((s) => s.value));
    case 'Minimum':
      return Math.min(...present.map((s) => s.value));
    default:
      throw new Error(`Statistic ${stat} is not simulated`);
  }
}

function breaches(properties: Readonly<Record<string, any>>, value: number): boolean {
  const threshold = properties.Threshold as number;
  switch (properties.ComparisonOperator) {
    case 'GreaterThanOrEqualToThreshold':
      return value >= threshold;
    case 'GreaterThanThreshold':
      return value > threshold;
    case 'LessThanThreshold':
      return value < threshold;
    case 'LessThanOrEqualToThreshold':
      return value <= threshold;
    default:
      throw new Error(`Comparison ${properties.ComparisonOperator} is not simulated`);
  }
}

/**
 * The state after a period: ALARM when `DatapointsToAlarm` of the last `EvaluationPeriods` breach, a
 * missing point counting as `TreatMissingData` says; `missing` and `ignore` keep the state while every point is missing.
 */
function nextState(
  properties: Readonly<Record<string, any>>,
  values: readonly (number | undefined)[],
  previous: 'OK' | 'ALARM' | 'INSUFFICIENT_DATA',
): 'OK' | 'ALARM' | 'INSUFFICIENT_DATA' {
  const window = values.slice(-(properties.EvaluationPeriods as number));
  const needed = (properties.DatapointsToAlarm ?? properties.EvaluationPeriods) as number;
  const treat = (properties.TreatMissingData ?? 'missing') as string;
  if (window.every((value) => value === undefined) && (treat === 'missing' || treat === 'ignore')) return previous;
  const breaching = window.filter((value) => (value === undefined ? treat === 'breaching' : breaches(properties, value))).length;
  return breaching >= needed ? 'ALARM' : 'OK';
}

// ---- Template reading ----

/** Every logical id a value refers to by Ref or Fn::GetAtt, however deep. */
function refsIn(value: unknown): string[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap(refsIn);
  const record = value as Record<string, unknown>;
  if (typeof record.Ref === 'string') return [record.Ref];
  if (Array.isArray(record['Fn::GetAtt'])) return [record['Fn::GetAtt'][0] as string];
  return Object.values(record).flatMap(refsIn);
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((key) => b.includes(key));
}

/** Its construct path without the stack's name and the trailing `Resource`, or its logical id. */
function labelOf(id: string, resource: CfnResourceJson): string {
  const path = resource.Metadata?.['aws:cdk:path'] as string | undefined;
  return path === undefined
    ? id
    : path
        .split('/')
        .slice(1)
        .filter((part) => part !== 'Resource')
        .join('/');
}
