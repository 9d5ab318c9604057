import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { apiThrottle, production, throttledRoutes, type StageConfig, type ThrottledRoute } from '../infra/stages';
import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { type METRICS, PROBE_METRICS } from '../shared/facts/metric-names';
import { ANSWER_CLASSES, answeredByEveryRoute, billRowOf, routeStepOf } from './bench/answer-classes';
import { type AnswerWarmResults, COLD_START_RATE, coldStartCost, computeBill, type BillRow } from './bench/bill';
import type { ColdStartComparison } from './bench/cold-start';
import { dollars } from './bench/format';
import type { CapacityRow } from './bench/measure-capacity';
import type { AuthorizerWarmResult, RouteWarmResult } from './bench/measure-warm-requests';
import { PRICE_LIST, PRICES } from './bench/prices';
import type { WarmResult } from './bench/warm';
import { resourcesOfType, synthesize, type CfnTemplate } from './lambda/synth';
import { API_FUNCTIONS, type ApiFunctionName } from '../shared/facts/function-names';
import { BAKE_MINUTES, CANARY_MINUTES, TRAFFIC_INTERVAL_MS } from '../shared/facts/deployment';

// `npm run costs`: docs/costs.md, the one place the project states what it costs, rendered from the price table,
// the bench's last results and the synthesized stages. test/tools/costs.test.ts fails when the page is stale.
export const COSTS_PATH = resolve(PROJECT_ROOT, 'docs/costs.md');
const RESULTS_PATH = resolve(PROJECT_ROOT, 'tools/bench/results.json');

export interface BenchResults {
  readonly settings: { readonly petCounts: readonly number[] };
  readonly coldStarts: Record<string, ColdStartComparison>;
  readonly warm: Record<string, RouteWarmResult & { readonly anonymous?: WarmResult }>;
  readonly authorizer: Record<string, AuthorizerWarmResult>;
  /** Each answer class's functions served warm (tools/bench/answer-classes.ts); absent from results recorded before the classes were. */
  readonly answers?: Record<string, readonly WarmResult[]>;
  readonly capacity: readonly CapacityRow[];
}

export interface StageTemplate {
  readonly config: StageConfig;
  readonly template: CfnTemplate;
}

const SECONDS_PER_DAY = 86_400;
const HOURS_PER_MONTH = 730;

/** One metric per value of each business metric's dimension: a new metric does not compile until it is counted here. */
const METRIC_SERIES: Readonly<Record<keyof typeof METRICS, number>> = {
  petsCreated: 1,
  idempotentReplays: 1,
  // One per refusal reason: missing, invalid, unavailable.
  authorizationsRefused: 3,
  // One per function that publishes it: the API's five.
  coldStart: 5,
  // Each route function's judged statuses (infra/version-alarms.ts; 16 in all), for every version together and
  // for the version serving: twice that, three times during a deployment's minutes. Billed only for hours a line comes in.
  answers: 32,
  // The authorizer's 401 and 503, for every version together and for the version serving.
  authorizerAnswers: 4,
};

/** What one run of the synthetic probe uses (functions/synthetic-probe/probe-run.ts): estimates, stated as such on the page. */
const PROBE_RUN = {
  apiRequests: 3,
  functionInvocations: 6,
  functionBilledMs: 10,
  readUnits: 5,
  secretReads: 1,
  logBytes: 3_000,
  probeBilledMs: 1_000,
} as const;

/**
 * Whether a route can serve a bill row: its operation's rows (`createPet`, `createPet, new Idempotency-Key`), and a
 * refusal, which any route can be sent. The costliest is what a flood on that route costs.
 */
function serves(route: ThrottledRoute, row: BillRow): boolean {
  const answerClass = ANSWER_CLASSES.find((candidate) => billRowOf(candidate) === row.operation);
  if (answerClass !== undefined) return answeredByEveryRoute(answerClass) || routeStepOf(answerClass).name === route;
  return row.operation.split(',')[0] === route;
}

/** The bill per million requests in production, computed from the bench's measurements at today's prices. */
export function billFrom(results: BenchResults): BillRow[] {
  const warm = new Map(Object.entries(results.warm)) as Map<ApiFunctionName, RouteWarmResult>;
  const authorizer = new Map(Object.entries(results.authorizer));
  const cold = new Map(Object.entries(results.coldStarts)) as Map<ApiFunctionName, ColdStartComparison>;
  return computeBill({ warm, authorizer, answers: answersOf(results) }, cold, results.capacity, results.settings.petCounts[0]!);
}

/**
 * The answer classes' warm results. Results recorded before every class was measured hold the anonymous request
 * alone, as the authorizer's answer without a key and listPets' refusal.
 */
function answersOf(results: BenchResults): AnswerWarmResults {
  if (results.answers !== undefined) return new Map(Object.entries(results.answers));
  const refused = results.warm.listPets?.anonymous;
  const missing = results.authorizer[production.name]?.missing;
  return new Map(refused === undefined || missing === undefined ? [] : [['anonymous', [missing, refused]]]);
}

/** Each function's cold start in production, beyond its typical request warm (the authorizer's with a cached key). */
export function coldStartsFrom(results: BenchResults) {
  const names = Object.keys(results.coldStarts) as ApiFunctionName[];
  return names.map((name) => {
    const warm = name === 'authorizer' ? results.authorizer[production.name]!.cached : results.warm[name]!.fn;
    return coldStartCost(name, results.coldStarts[name]!, warm);
  });
}

/** The most one route can cost in a day at its steady rate, and what drives it. */
export function dailyCapOf(stage: StageConfig, bill: readonly BillRow[]) {
  return throttledRoutes(stage).map((route) => {
    const costliest = bill.filter((row) => serves(route, row)).reduce((most, row) => (row.total > most.total ? row : most));
    const { rateLimit, burstLimit } = stage.throttle[route];
    return { route, rateLimit, burstLimit, costliest, perDay: (rateLimit * SECONDS_PER_DAY * costliest.total) / 1e6 };
  });
}

/** What a stage costs a month with no traffic at all: what it keeps running and watching. */
export function fixedMonthlyOf({ config, template }: StageTemplate) {
  const count = (type: string) => Object.keys(resourcesOfType(template, type)).length;
  const probe = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).find(([id]) => id.startsWith('SyntheticProbe'));
  const probeMemoryGb = Number(probe?.[1].Properties?.MemorySize ?? 0) / 1024;
  const runs = (HOURS_PER_MONTH * 60) / config.alarms.periodMinutes;
  const functionGb = config.memoryMiB.listPets / 1024;
  // The access log's own counts (infra/monitoring.ts): one series each, but the refusals by reason, counted above.
  const accessLogSeries = Object.values(resourcesOfType(template, 'AWS::Logs::MetricFilter'))
    .flatMap((filter) => filter.Properties!.MetricTransformations as Array<{ Dimensions?: unknown }>)
    .filter((transformation) => transformation.Dimensions === undefined).length;
  const metrics =
    Object.values(METRIC_SERIES).reduce((sum, n) => sum + n, 0) + [PROBE_METRICS.success, PROBE_METRICS.latency].length + accessLogSeries;
  // CloudWatch bills an alarm for each metric it reads: a metric-math alarm for every metric of its expression.
  const alarms = Object.values(resourcesOfType(template, 'AWS::CloudWatch::Alarm'));
  const alarmMetrics = alarms.reduce(
    (sum, alarm) =>
      sum + ((alarm.Properties!.Metrics as Array<{ MetricStat?: unknown }> | undefined)?.filter((m) => m.MetricStat).length ?? 1),
    0,
  );
  const counted = (item: string, type: string, price: number) => [item, String(count(type)), count(type) * price] as const;
  // `uses` a run, at `price` per `per` uses.
  const perRun = (item: string, uses: number, price: number, per: number) =>
    [item, (runs * uses).toLocaleString('en-US'), (runs * uses * price) / per] as const;
  // Per million invocations of a function of `gb` billed `ms` each.
  const invocations = (gb: number, ms: number) => PRICES.lambdaPerMillionInvocations + gb * (ms / 1000) * PRICES.lambdaArmPerGbSecond * 1e6;
  const rows: Array<readonly [item: string, quantity: string, usd: number]> = [
    [
      `Alarm metrics (${alarms.length} alarms; a metric-math alarm is billed for each metric it reads)`,
      String(alarmMetrics),
      alarmMetrics * PRICES.alarmMetricPerMonth,
    ],
    counted('Dashboard', 'AWS::CloudWatch::Dashboard', PRICES.dashboardPerMonth),
    counted('Secrets (cursor key, probe key)', 'AWS::SecretsManager::Secret', PRICES.secretPerMonth),
    ['Custom metrics, at most (business, probe and access log)', String(metrics), metrics * PRICES.customMetricPerMonth],
    [`Probe: scheduled runs (first 14 million a month free)`, runs.toLocaleString('en-US'), 0],
    perRun(
      `Probe: its function (requests and ${PROBE_RUN.probeBilledMs} ms a run at most)`,
      1,
      invocations(probeMemoryGb, PROBE_RUN.probeBilledMs),
      1e6,
    ),
    perRun('Probe: API requests it makes', PROBE_RUN.apiRequests, PRICES.httpApiPerMillionRequests, 1e6),
    perRun(
      `Probe: API functions it invokes (about ${PROBE_RUN.functionBilledMs} ms each)`,
      PROBE_RUN.functionInvocations,
      invocations(functionGb, PROBE_RUN.functionBilledMs),
      1e6,
    ),
    perRun('Probe: DynamoDB read units', PROBE_RUN.readUnits, PRICES.dynamoDbPerMillionReadUnits, 1e6),
    perRun('Probe: secret reads', PROBE_RUN.secretReads, PRICES.secretsManagerPer10kCalls, 1e4),
    [
      `Probe: log bytes (about ${PROBE_RUN.logBytes / 1000} KB a run)`,
      `${((runs * PROBE_RUN.logBytes) / 1e9).toFixed(2)} GB`,
      ((runs * PROBE_RUN.logBytes) / 1024 ** 3) * PRICES.logsPerGbIngested,
    ],
  ];
  return { rows, total: rows.reduce((sum, [, , usd]) => sum + usd, 0) };
}

/**
 * What one function's deployment uses beyond the release's own resources (docs/operations.md, "How a release
 * reaches traffic"): estimates, stated as such on the page. Its requests are the deployment traffic's, through
 * the canary and the bake; the judged answers among them (refused creates, unknown keys) each write a metric line.
 */
const DEPLOYMENT_RUN = {
  /** A route's or the authorizer's billed duration for one of the traffic's requests: reads and refusals, warm. */
  functionBilledMs: 10,
  /** At most, for a listing of every shard; a read of one pet is one. */
  readUnitsPerRequest: 4,
  /** The `Answers` or `AuthorizerAnswers` line of a judged answer. */
  metricLineBytes: 330,
  /** The hook's checks and CodeDeploy's own steps, beyond the canary and the bake, that the traffic run lasts. */
  extraMinutes: 1,
} as const;

/** What a stage pays for each function one release deploys, and for a release that changes every function. */
export function deploymentCostOf({ config, template }: StageTemplate) {
  const traffic = Object.entries(resourcesOfType(template, 'AWS::Lambda::Function')).find(([id]) => id.startsWith('DeploymentTraffic'));
  const trafficGb = Number(traffic?.[1].Properties?.MemorySize ?? 0) / 1024;
  const requests = ((CANARY_MINUTES + BAKE_MINUTES) * 60_000) / TRAFFIC_INTERVAL_MS;
  const functionGb = config.memoryMiB.listPets / 1024;
  const seconds = (minutes: number) => minutes * 60;
  const invocation = (gb: number, s: number) => PRICES.lambdaPerMillionInvocations / 1e6 + gb * s * PRICES.lambdaArmPerGbSecond;
  const rows: Array<readonly [item: string, quantity: string, usd: number]> = [
    [
      `Its own requests, every ${TRAFFIC_INTERVAL_MS} ms for the ${CANARY_MINUTES}-minute canary and the ${BAKE_MINUTES}-minute bake (about ${DEPLOYMENT_RUN.functionBilledMs} ms each)`,
      requests.toLocaleString('en-US'),
      requests * invocation(functionGb, DEPLOYMENT_RUN.functionBilledMs / 1000),
    ],
    [
      `DynamoDB read units, at most ${DEPLOYMENT_RUN.readUnitsPerRequest} a request`,
      (requests * DEPLOYMENT_RUN.readUnitsPerRequest).toLocaleString('en-US'),
      (requests * DEPLOYMENT_RUN.readUnitsPerRequest * PRICES.dynamoDbPerMillionReadUnits) / 1e6,
    ],
    [
      `Metric lines of its judged answers, at most one a request (about ${DEPLOYMENT_RUN.metricLineBytes} bytes)`,
      `${((requests * DEPLOYMENT_RUN.metricLineBytes) / 1e6).toFixed(2)} MB`,
      ((requests * DEPLOYMENT_RUN.metricLineBytes) / 1024 ** 3) * PRICES.logsPerGbIngested,
    ],
    [
      `The traffic run (${CANARY_MINUTES + BAKE_MINUTES + DEPLOYMENT_RUN.extraMinutes} minutes) and the bake (${BAKE_MINUTES} minutes), mostly waiting`,
      '2 invocations',
      invocation(trafficGb, seconds(CANARY_MINUTES + BAKE_MINUTES + DEPLOYMENT_RUN.extraMinutes)) +
        invocation(trafficGb, seconds(BAKE_MINUTES)),
    ],
  ];
  const perFunction = rows.reduce((sum, [, , usd]) => sum + usd, 0);
  return { rows, perFunction, perRelease: perFunction * API_FUNCTIONS.length };
}

/** Dollars to the cent, for sums a reader compares. */
function money(value: number): string {
  return `$${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

/** A list price as AWS states it: cents at least, every digit it has. */
function listPrice(usd: number): string {
  const digits = String(usd).split('.')[1]?.length ?? 0;
  return `$${usd.toFixed(Math.max(2, digits))}`;
}

function table(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

export function renderCosts(results: BenchResults, stages: readonly StageTemplate[]): string {
  const bill = billFrom(results);
  const sections = [
    '<!-- Rendered by `npm run costs` from tools/bench/prices.ts, tools/bench/results.json and the synthesized stages: edit those, not this page. -->',
    '',
    '# What the animal store costs',
    '',
    `Every figure here is computed from one price table, for ${PRICES.region}, the region of every stage, as read on ${PRICES.readOn}.`,
    'The runbook and `npm run bench` use the same table; a test fails when a stage moves to another region or this page is stale.',
    'US dollars, list prices, first tiers; free tiers, taxes, support plans and credits are left out.',
    '',
    '## Prices',
    '',
    "Read from AWS's Price List offer files for eu-west-1 (`https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/<service>/current/eu-west-1/index.json`),",
    'as published between 2026-09-11 and 2026-10-02, through public copies: our machines cannot reach AWS. Check them in the',
    'AWS Pricing Calculator before quoting a figure to anyone, and update `tools/bench/prices.ts`, then run `npm run costs`.',
    '',
    table(
      ['Item', 'Price', 'Per'],
      Object.values(PRICE_LIST).map((price) => [price.item, listPrice(price.usd), price.per]),
    ),
    '',
    '## Per million requests',
    '',
    "Production's functions at their configured memory (arm64), priced from what `npm run bench -- --record` last recorded: each",
    "function's billed duration, the DynamoDB capacity each request consumed, and the log bytes it wrote. Every request",
    'runs the authorizer and a route function, an anonymous one included (it is refused by the route, with our 401).',
    'Data transfer out is left out: a full page of 100 pets is about 20 KB,',
    `${dollars(((20_000 * 1e6) / 1024 ** 3) * PRICES.dataTransferOutPerGb)} per million such pages. The floor is what the architecture`,
    "cannot do without: HTTP API, two invocations and the request's DynamoDB units; the rest (duration, logs) is ours.",
    `Cold starts are priced beside, at ${COLD_START_RATE * 100} % of each function's invocations ([Cold starts](#cold-starts)).`,
    '',
    table(
      [
        'Request',
        'HTTP API',
        'Lambda requests',
        'Lambda duration',
        'DynamoDB',
        'Log bytes',
        'Logs',
        'Per million',
        'To its floor',
        `Cold starts, ${COLD_START_RATE * 100} %`,
        'Their share',
      ],
      bill.map((row) => [
        row.operation,
        row['HTTP API'],
        row['Lambda requests'],
        row['Lambda duration'],
        row.DynamoDB,
        row['log bytes'],
        row.logs,
        `**${row['per million']}**`,
        `${row['to floor'].toFixed(2)}× ${row.floor}`,
        row['cold starts'],
        row['cold-start share'],
      ]),
    ),
    '',
    'API Gateway is the largest part of every request; a DynamoDB write costs more than a whole anonymous request',
    "spends in Lambda. The authorizer's key lookup (once per key per 30 s per instance) is one read unit.",
    '',
    '### Cold starts',
    '',
    'Lambda bills INIT, so a cold start costs its INIT and first request: here, the cold start `npm run bench` measured',
    "(a fresh process to its first answer) with its CPU time stretched to the memory's vCPU share, as the memory choice",
    'estimates it ([performance.md](performance.md#how-memory-is-chosen)). How often a function starts cold depends on',
    'traffic and deploys; AWS finds INIT in under 1 % of production invocations, and the table above takes that 1 %.',
    '',
    table(
      ['Function', 'Memory', 'INIT and first request', 'Beyond the same request warm', 'A million cold starts'],
      coldStartsFrom(results).map((cost) => [
        cost.name,
        `${cost.memoryMiB} MB`,
        `${cost.billedMs} ms`,
        `${cost.extraMs} ms`,
        dollars(cost.perMillion),
      ]),
    ),
    '',
    '## The most a stage can cost in a day',
    '',
    'API Gateway throttles each route on its own, so each stage gives every route a share of its requests (`throttle` in',
    '`infra/stages.ts`) and the whole API admits at most their sum; beyond it, clients get 429 from API Gateway, which',
    'costs nothing. At that rate, each route serving its costliest request all day:',
    '',
    ...stages.flatMap(({ config }) => {
      const caps = dailyCapOf(config, bill);
      const total = apiThrottle(config);
      const perDay = caps.reduce((sum, cap) => sum + cap.perDay, 0);
      return [
        `**${config.name}**: its throttle admits at most ${total.rateLimit} requests/s (burst ${total.burstLimit}), the routes' shares below added up; **${money(perDay)} a day**, ${money(perDay * 30)} in 30 days.`,
        '',
        table(
          ['Route', 'Requests/s', 'Burst', 'Costliest request', 'Per day at the rate'],
          caps.map((cap) => [
            cap.route,
            cap.rateLimit,
            cap.burstLimit,
            `${cap.costliest.operation}, ${cap.costliest['per million']} per million`,
            money(cap.perDay),
          ]),
        ),
        '',
      ];
    }),
    "A flood of anonymous requests costs the anonymous line's price per million, spread over the routes it hits. The",
    '`ApiClientErrorRate` alarm fires on it (401 and 429 are 4xx), and the dashboard\'s "Authorizations refused, by reason" tells a scan',
    "(`missing`) from a leaked or guessed key (`invalid`). Lower a route's share, or put AWS WAF in front (through CloudFront), if",
    'floods become routine. Stored data is billed on top: DynamoDB storage beyond 25 GB and point-in-time recovery per GB-month.',
    '',
    '## What a stage costs with no traffic',
    '',
    'What each stage keeps running and watching every month (730 hours), whether anyone calls it or not. The probe runs once',
    'per alarm period; its per-run use is an estimate (three requests, six function invocations, a few reads, one secret read).',
    'Log storage, DynamoDB storage and backups grow with data and are not included; a Route 53 hosted zone for a custom',
    "domain is the operator's own, billed to its account.",
    '',
    ...stages.flatMap((stage) => {
      const { rows, total } = fixedMonthlyOf(stage);
      return [
        `**${stage.config.name}**: about **${money(total)} a month**.`,
        '',
        table(
          ['Item', 'Quantity', 'Per month'],
          rows.map(([item, quantity, usd]) => [item, quantity, dollars(usd)]),
        ),
        '',
      ];
    }),
    '## What a deployment adds',
    '',
    "Each function a release changes is judged against its old version over its canary and its bake, on clients' requests and",
    'on the deployment\'s own, which keep even an idle stage\'s canary judged ("How a release reaches traffic" in',
    '[operations.md](operations.md#how-a-release-reaches-traffic)). What that adds, per function deployed, estimated; its alarms',
    "are among the stage's alarm metrics above, and each version's answer counts are custom metrics billed for the hours they are published.",
    '',
    ...stages.flatMap((stage) => {
      const { rows, perFunction, perRelease } = deploymentCostOf(stage);
      return [
        `**${stage.config.name}**: about **${dollars(perFunction)} a function**, ${dollars(perRelease)} for a release that changes all ${API_FUNCTIONS.length}. Each deployment takes about ${CANARY_MINUTES + BAKE_MINUTES} minutes after its hook, ${BAKE_MINUTES} of them the bake.`,
        '',
        table(
          ['Item', 'Quantity', 'Per function deployed'],
          rows.map(([item, quantity, usd]) => [item, quantity, dollars(usd)]),
        ),
        '',
      ];
    }),
    `A CloudWatch Synthetics canary doing the probe's job once a minute would cost ${money(HOURS_PER_MONTH * 60 * PRICES.syntheticsCanaryPerRun)} a month in canary runs alone,`,
    'before its Lambda, S3 artifact, metric and alarm charges ("Synthetic probe" in [operations.md](operations.md#synthetic-probe) says why the probe is a function).',
  ];
  return `${sections.join('\n')}\n`;
}

/** The functions behind the API the bench's results do not measure: a new one, until `npm run bench -- --record` has run. */
export function unmeasuredFunctions(results: BenchResults): ApiFunctionName[] {
  return API_FUNCTIONS.filter((name) => results.coldStarts[name] === undefined);
}

/**
 * Synthesizes the stages without bundling (the page needs templates, not code) and renders the page from the
 * recorded results, or from another results file (a test's copy).
 */
export function renderCostsFromSources(resultsPath = RESULTS_PATH): string {
  const results = JSON.parse(readFileSync(resultsPath, 'utf8')) as BenchResults;
  const unmeasured = unmeasuredFunctions(results);
  if (unmeasured.length > 0) {
    throw new Error(
      `The bench's results (tools/bench/results.json) measure no ${unmeasured.join(', ')}: run npm run bench -- --record, which renders docs/costs.md too.`,
    );
  }
  const synthesis = synthesize({ context: { 'aws:cdk:bundling-stacks': [] } });
  try {
    return renderCosts(
      results,
      synthesis.stages.map(({ config, json }) => ({ config, template: json })),
    );
  } finally {
    synthesis.dispose();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  writeFileSync(COSTS_PATH, renderCostsFromSources());
  process.stdout.write(`Wrote ${COSTS_PATH}\n`);
}
