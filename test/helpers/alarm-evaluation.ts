import { throttledRoutes, type StageConfig, type ThrottledRoute } from '../../infra/stages';
import { PROBE_METRICS } from '../../shared/facts/metric-names';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { preflightRoute, routeKey, routes } from '../../shared/facts/routes';
import { resourcesOfType, type CfnResourceJson, type CfnTemplate } from '../../tools/lambda/synth';

/**
 * Evaluates a synthesized template's alarms over simulated minutes, as CloudWatch would: the access log
 * lines API Gateway writes (in the stage's own access log format) go through the template's metric
 * filters, API Gateway's and Lambda's metrics are counted from the same requests, and each alarm's
 * metric math, threshold, M-of-N and missing-data rule decide its state minute by minute. Everything is
 * read from the template (resources are found by what they are, not by their ids), so the evaluation
 * follows the stacks wherever their constructs live.
 */

/** Who sends a request, as the authorizer sees it. */
export type Caller = 'no key' | 'malformed key' | 'unknown key' | 'revoked key' | 'valid key';

/** Requests on one route, every second of a minute. */
export interface Traffic {
  /** The route whose share of the stage's throttle admits them (infra/stages.ts). */
  readonly route: ThrottledRoute;
  readonly perSecond: number;
  readonly caller: Caller;
}

/** What a canary version does wrong, on the share of its function's requests it serves. */
export type Regression =
  /** The authorizer answers `invalid` to valid keys. */
  | 'refuses valid keys'
  /** A route answers 401 though the authorizer said `allowed`. */
  | 'refuses accepted keys'
  /** A route's function throws: API Gateway answers 500 and Lambda counts an error. */
  | 'crashes';

export interface Canary {
  readonly function: ApiFunctionName;
  /** Share of the function's invocations the new version serves: CodeDeploy's canary percentage. */
  readonly share: number;
  readonly regression: Regression;
}

/** One simulated minute: who calls, and what a canary does meanwhile. */
export interface Minute {
  readonly traffic: readonly Traffic[];
  readonly canary?: Canary;
  /** The keys table does not answer: every key the authorizer looks up is `unavailable` (our 503). */
  readonly keysTableDown?: boolean;
}

/** One access log line, as the stage's format writes it, and how many requests wrote it this minute. */
export interface LoggedRequests {
  readonly line: Readonly<Record<string, unknown>>;
  readonly count: number;
}

/** What one function did in a minute. */
interface Invocations {
  count: number;
  errors: number;
}

/** What a minute leaves in CloudWatch: the access log's lines, and each function's invocations. */
export interface SimulatedMinute {
  readonly requests: readonly LoggedRequests[];
  readonly invocations: ReadonlyMap<ApiFunctionName, Invocations>;
}

/** A metric as an alarm names it, Refs rendered as `Ref:<logical id>`. */
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
  /** Alarms whose value this minute breached their threshold. */
  readonly breaching: readonly AlarmModel[];
  /** Alarms in ALARM once this minute is evaluated. */
  readonly inAlarm: readonly AlarmModel[];
  /** Functions whose deployment CodeDeploy would now stop and roll back, or refuse to run. */
  readonly rollingBack: readonly ApiFunctionName[];
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
  private readonly functionIds: ReadonlyMap<string, ApiFunctionName>;

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
    for (const [groupId, group] of this.ofType('AWS::CodeDeploy::DeploymentGroup')) {
      const configuration = group.Properties!.AlarmConfiguration;
      if (configuration?.Enabled !== true) continue;
      const fn = this.functionDeployedBy(groupId);
      for (const alarm of configuration.Alarms as Array<{ Name: unknown }>) {
        for (const alarmId of refsIn(alarm.Name)) rollsBack.set(alarmId, [...(rollsBack.get(alarmId) ?? []), fn]);
      }
    }
    this.alarms = this.ofType('AWS::CloudWatch::Alarm').map(([id, alarm]) => ({
      id,
      label: labelOf(id, alarm),
      rollsBack: rollsBack.get(id) ?? [],
      properties: alarm.Properties!,
    }));
  }

  /** The access log lines and invocations of each minute, through the stage's throttle. */
  simulate(stage: Pick<StageConfig, 'throttle' | 'cors'>, minutes: readonly Minute[]): SimulatedMinute[] {
    return minutes.map((minute) => simulateMinute(stage, minute, this.accessLogFormat));
  }

  /** Every alarm's state, minute by minute, over the simulated minutes. */
  evaluate(minutes: readonly SimulatedMinute[], other: OtherMetrics = PROBE_PASSES): MinuteVerdict[] {
    const series = new Map(
      this.alarms.map((alarm) => [alarm.id, minutes.map((_, index) => this.alarmValue(alarm, minutes, index, other))]),
    );
    const states = new Map<string, 'OK' | 'ALARM' | 'INSUFFICIENT_DATA'>(this.alarms.map((alarm) => [alarm.id, 'OK']));
    return minutes.map((_, index) => {
      const breaching: AlarmModel[] = [];
      for (const alarm of this.alarms) {
        const values = series.get(alarm.id)!;
        const value = values[index];
        if (value !== undefined && breaches(alarm.properties, value)) breaching.push(alarm);
        states.set(alarm.id, nextState(alarm.properties, values.slice(0, index + 1), states.get(alarm.id)!));
      }
      const inAlarm = this.alarms.filter((alarm) => states.get(alarm.id) === 'ALARM');
      return { minute: index + 1, breaching, inAlarm, rollingBack: [...new Set(inAlarm.flatMap((alarm) => alarm.rollsBack))] };
    });
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
      dimensions: Object.fromEntries(((stat.Metric.Dimensions ?? []) as any[]).map((d) => [d.Name as string, renderRef(d.Value)])),
    };
    return statistic(stat.Stat as string, this.samples(descriptor, minute) ?? samplesOf(other(descriptor, index)));
  }

  /** The data points the simulated requests give a metric, or undefined when nothing simulated publishes it. */
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
    if (namespace === 'AWS/ApiGateway' && dimensions.ApiId === `Ref:${this.apiId}` && keys.length === 1) {
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
    if (namespace === 'AWS/Lambda' && keys.length === 1 && dimensions.FunctionName?.startsWith('Ref:')) {
      const fn = this.functionIds.get(dimensions.FunctionName.slice('Ref:'.length));
      if (fn === undefined) return undefined;
      // Lambda publishes a function's metrics for the minutes it ran in, and nothing for the others.
      const invoked = minute.invocations.get(fn);
      if (invoked === undefined || invoked.count === 0) return [];
      switch (metricName) {
        case 'Errors':
          return [{ value: invoked.errors, weight: 1 }];
        case 'Throttles':
          return [{ value: 0, weight: 1 }];
        case 'Duration':
          return [{ value: DURATION_MS, weight: invoked.count }];
        case 'Invocations':
          return [{ value: invoked.count, weight: 1 }];
      }
    }
    return undefined;
  }

  /** A field of an access log line, by the context variable the stage's format writes into it. */
  private field(line: Readonly<Record<string, unknown>>, variable: string): unknown {
    const key = Object.keys(this.accessLogFields).find((name) => this.accessLogFields[name] === variable);
    if (key === undefined) throw new Error(`The access log format writes no ${variable}`);
    return line[key];
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

  private functionDeployedBy(groupId: string): ApiFunctionName {
    const alias = this.ofType('AWS::Lambda::Alias').find(([, resource]) =>
      refsIn((resource as any).UpdatePolicy?.CodeDeployLambdaAliasUpdate?.DeploymentGroupName).includes(groupId),
    );
    const fn = alias && refsIn(alias[1].Properties!.FunctionName)[0];
    const name = fn === undefined ? undefined : this.functionIds.get(fn);
    if (name === undefined) throw new Error(`Deployment group ${groupId} moves no alias of a function behind the API`);
    return name;
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

interface MetricFilter {
  readonly matches: (line: Readonly<Record<string, unknown>>) => boolean;
  readonly namespace: string;
  readonly metricName: string;
  readonly value: string;
  readonly defaultValue: number | undefined;
  readonly dimensions: Readonly<Record<string, string>>;
}

// ---- The requests of a minute, through the stage's throttle ----

/** What the house authorizer tells the route for each caller (shared/domain/auth/authenticate.ts). */
const VERDICT: Readonly<Record<Caller, string>> = {
  'no key': 'missing',
  'malformed key': 'invalid',
  'unknown key': 'invalid',
  'revoked key': 'invalid',
  'valid key': 'allowed',
};

/** A request as API Gateway knows it when it writes the access log line. */
interface Answered {
  readonly route: ThrottledRoute;
  readonly status: number;
  /** The authorizer's context; none when API Gateway refused the request before invoking it (429). */
  readonly outcome?: string;
  readonly functionError?: boolean;
}

function simulateMinute(stage: Pick<StageConfig, 'throttle' | 'cors'>, minute: Minute, format: string): SimulatedMinute {
  const { canary } = minute;
  if (canary && (canary.function === 'authorizer') !== (canary.regression === 'refuses valid keys'))
    throw new Error(`Not simulated: a canary of ${canary.function} that ${canary.regression}`);
  const served = throttledRoutes(stage);
  const answered = new Map<string, { answer: Answered; count: number }>();
  const answer = (a: Answered, count: number) => {
    if (count <= 0) return;
    const key = JSON.stringify(a);
    answered.set(key, { answer: a, count: (answered.get(key)?.count ?? 0) + count });
  };
  const invocations = new Map<ApiFunctionName, Invocations>();
  const invoke = (fn: ApiFunctionName, count: number, errors: number) => {
    const seen = invocations.get(fn) ?? { count: 0, errors: 0 };
    invocations.set(fn, { count: seen.count + count, errors: seen.errors + errors });
  };

  for (const route of served) {
    const traffic = minute.traffic.filter((t) => t.route === route);
    const offered = traffic.reduce((sum, t) => sum + t.perSecond * 60, 0);
    // A route's share is a steady rate per second: over a minute it admits the rate's worth and answers the rest 429.
    const admittedShare = offered === 0 ? 0 : Math.min(1, (stage.throttle[route].rateLimit * 60) / offered);
    for (const t of traffic) {
      const count = Math.round(t.perSecond * 60);
      const admitted = Math.round(count * admittedShare);
      answer({ route, status: 429 }, count - admitted);
      const fn = functionOfRoute(route);
      const byAuthorizer = canary?.function === 'authorizer' ? Math.round(admitted * canary.share) : 0;
      const byRoute = canary?.function === fn ? Math.round((admitted - byAuthorizer) * canary.share) : 0;
      const stable = admitted - byAuthorizer - byRoute;
      invoke('authorizer', admitted, 0);
      // A missing or malformed key is refused before any lookup; any other needs the keys table.
      const verdict = minute.keysTableDown && t.caller !== 'no key' && t.caller !== 'malformed key' ? 'unavailable' : VERDICT[t.caller];
      answer(houseAnswer(route, verdict), stable);
      // The authorizer's canary refuses valid keys; every other caller it answers as before.
      answer(houseAnswer(route, verdict === 'allowed' && canary?.regression === 'refuses valid keys' ? 'invalid' : verdict), byAuthorizer);
      invoke(fn, stable + byAuthorizer, 0);
      if (byRoute > 0) {
        const regressed = canaryAnswer(route, verdict, canary!.regression);
        answer(regressed, byRoute);
        invoke(fn, byRoute, regressed.functionError ? byRoute : 0);
      }
    }
  }
  return {
    requests: [...answered.values()].map(({ answer: a, count }) => ({ line: accessLogLine(format, a), count })),
    invocations,
  };
}

/** How long every simulated invocation runs: far from any timeout, so no duration alarm is exercised here. */
const DURATION_MS = 20;

function functionOfRoute(route: ThrottledRoute): ApiFunctionName {
  return route === 'preflight' ? 'routeNotFound' : route;
}

/** What the house routes answer a verdict (shared/http/handler.ts): 401, 503, or the route's success (routeNotFound's 404). */
function houseAnswer(route: ThrottledRoute, outcome: string): Answered {
  const success = route === 'routeNotFound' || route === 'preflight' ? 404 : routes.find((r) => r.operationId === route)!.successStatus;
  const status = outcome === 'allowed' ? success : outcome === 'unavailable' ? 503 : 401;
  return { route, status, outcome };
}

/** A route function's canary (simulateMinute refuses one that refuses valid keys, the authorizer's regression). */
function canaryAnswer(route: ThrottledRoute, outcome: string, regression: Regression): Answered {
  if (outcome !== 'allowed') return houseAnswer(route, outcome);
  return regression === 'crashes' ? { route, status: 500, outcome, functionError: true } : { route, status: 401, outcome };
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
  const context: Record<string, string> = {
    '$context.requestId': 'simulated',
    '$context.httpMethod': method!,
    '$context.path': path!,
    '$context.routeKey': key,
    '$context.status': String(a.status),
    '$context.protocol': 'HTTP/1.1',
    '$context.responseLatency': String(a.status === 429 ? 1 : DURATION_MS * 2 + 10),
    ...(a.outcome === undefined
      ? { '$context.error.message': 'Too Many Requests' }
      : {
          '$context.integrationStatus': String(a.functionError ? 200 : a.status),
          '$context.integrationLatency': String(DURATION_MS),
          '$context.authorizer.outcome': a.outcome,
          ...(a.outcome === 'allowed' ? { '$context.authorizer.keyId': 'key_0123456789abcdef' } : {}),
          ...(a.functionError ? { '$context.integrationErrorMessage': 'The Lambda function returned an error' } : {}),
        }),
  };
  const template = JSON.parse(format) as Record<string, string>;
  return Object.fromEntries(Object.entries(template).map(([name, variable]) => [name, context[variable] ?? '-']));
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

function renderRef(value: unknown): string {
  if (typeof value === 'string') return value;
  const [id] = refsIn(value);
  if (id === undefined) throw new Error(`Cannot render dimension value ${JSON.stringify(value)}`);
  return `Ref:${id}`;
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
