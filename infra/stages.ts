import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { LogLevel } from './api-function';
import { FUNCTION_CATALOG, memoryOf, type RouteThrottle, type StageName } from '../shared/catalog/function-catalog';
import type { FunctionName } from '../shared/facts/function-names';
import { OPERATION_IDS, type OperationId } from '../shared/facts/routes';
import type { RestoredPetsTable } from './tables';
import { LISTING, type ListingConfig } from '../shared/facts/listing';
import { PREFLIGHT_MAX_AGE_SECONDS, type CorsConfig } from '../shared/http/cors-policy';

export type { CorsConfig } from '../shared/http/cors-policy';
export type { RestoredPetsTable } from './tables';
export type { ListingConfig } from '../shared/facts/listing';
export type { RouteThrottle } from '../shared/catalog/function-catalog';

/** What a stage's function memory is chosen to meet (`npm run bench` estimates each setting against them). */
export interface LatencyGoals {
  /** A cold start: from the start of INIT to the first answer, in milliseconds. */
  readonly coldStartMs: number;
  /** The p99 of a warm request inside the function, in milliseconds. */
  readonly warmP99Ms: number;
}

/**
 * Every route a stage can serve: one per operation, routeNotFound's `$default` route, and the CORS
 * preflight route (only on a stage that allows browser origins).
 */
export type ThrottledRoute = OperationId | 'routeNotFound' | 'preflight';

/**
 * Each route's share of the stage's requests. API Gateway's stage throttle is a limit per route, not for
 * the API, so the sum of the shares (`apiThrottle`) is the cap that bounds the bill.
 */
export type ThrottleConfig = Readonly<Record<ThrottledRoute, RouteThrottle>>;

export interface AlarmThresholds {
  /** Share of requests, in percent, answered with a 5xx over one period that raises the API alarm. */
  readonly serverErrorRatePercent: number;
  /** Unhandled errors (crashes, timeouts, failed cold starts) of one function per period. */
  readonly functionErrors: number;
  /** Lambda throttles of one function per period. */
  readonly functionThrottles: number;
  /** DynamoDB requests throttled on one table per period. */
  readonly dynamoDbThrottledRequests: number;
  /** Share of requests, in percent, answered with a 4xx over one period: throttling (429), 401 storms, broken clients. */
  readonly clientErrorRatePercent: number;
  /** p99 of API Gateway's latency over one period, in milliseconds. */
  readonly p99LatencyMs: number;
  /** A function's maximum duration over one period, as a percentage of its timeout. */
  readonly durationPercentOfTimeout: number;
  /** Requests in one period below which the 4xx-rate and latency alarms stay quiet: over a handful a rate or a p99 says nothing. */
  readonly minimumRequests: number;
  /** Length of one evaluation period. */
  readonly periodMinutes: number;
  /** Breaching periods, out of `evaluationPeriods`, that raise an alarm. */
  readonly datapointsToAlarm: number;
  /** Periods an alarm looks back over. */
  readonly evaluationPeriods: number;
  /** When a deployment's new version is worse than its old one (infra/version-alarms.ts). */
  readonly newVersion: NewVersionThresholds;
}

/**
 * How a function's new version is judged against its old one over the same minutes, during the canary and the
 * bake: each margin is over what the old version did, so faults both share, the old version's own and callers'
 * mixes roll nothing back.
 */
export interface NewVersionThresholds {
  /** Requests a version must serve in a period to be judged, or to be the baseline: fewer say nothing of a rate. */
  readonly minimumRequests: number;
  /**
   * Answers of a kind beyond what the old version's rate predicts for the new version's requests, in one period,
   * before a margin counts: one stray answer is no regression.
   */
  readonly excessAnswers: number;
  /** Crashes, timeouts and 500s, in percentage points of its requests over the old version's rate. */
  readonly failureMarginPercent: number;
  /**
   * In the bake, where the old version serves nothing to compare with, the failure rate that rolls the new version
   * back: one no healthy stage has, so a fault the old version shared, at a rate it lived with, rolls nothing back.
   */
  readonly bakeFailurePercent: number;
  /**
   * 503, 401, 404 or 400 answers breach once their excess over the old version's rate is this many standard deviations
   * of a count at that rate (binomial) and `excessAnswers`. A count's deviation, not a margin in percentage points:
   * refused outsiders add to both versions' requests and to neither's answers, so they thin out a difference of rates
   * but leave the excess as it was; and a rate near 100 % (the deployment's refused creates) varies little.
   */
  readonly answerDeviations: number;
  /** The new version's mean duration breaches at this multiple of the old version's plus `latencyMarginMs`. */
  readonly latencyFactor: number;
  readonly latencyMarginMs: number;
  /** In the bake, the mean duration that rolls the new version back: far above a warm request's, and above a slow store's. */
  readonly bakeMeanDurationMs: number;
}

/** A Route 53 public hosted zone, named by id and name so synthesis stays offline (no lookup). */
export interface HostedZoneConfig {
  /** The zone's id, e.g. Z0123456789ABCDEFGHIJ (Route 53 console, or `aws route53 list-hosted-zones`). */
  readonly hostedZoneId: string;
  /** The zone's name, e.g. example.com: the domain name must be inside it. */
  readonly zoneName: string;
}

/**
 * A custom domain for the stage's API, so its base URL outlives the API itself. Give a certificate,
 * a hosted zone, or both (docs/operations.md, "Custom domain").
 */
export interface DomainConfig {
  /** The host clients call: the base URL becomes `https://<domainName>/v1`. */
  readonly domainName: string;
  /** An ACM certificate covering `domainName`, in the stage's own region; without it the stack requests one, validated by DNS in `hostedZone`. */
  readonly certificateArn?: string;
  /** The zone holding `domainName`: the stack adds the alias record there (and validates its certificate there when it requests one). */
  readonly hostedZone?: HostedZoneConfig;
}

/** Who hears an alarm: an e-mail address (confirmed once by its owner) or an existing SNS topic, e.g. AWS Chatbot's. */
export type AlarmSubscription = { readonly email: string } | { readonly topicArn: string };

/** Everything that differs between two deployments of the animal store. */
export interface StageConfig {
  /** Short name: part of the stack name, tags, metric namespace and the keys CLI's `--stage`. */
  readonly name: string;
  /** CloudFormation stack name; unique per account and region. */
  readonly stackName: string;
  /**
   * The AWS account the stage deploys to, fixed so every machine synthesizes the same template and the
   * CDK CLI refuses another account's credentials (docs/operations.md, "2. Fill in the stages (once)").
   */
  readonly account: string;
  /** The AWS region the stage deploys to. */
  readonly region: string;
  /** The stage's custom domain; without one, clients call the generated execute-api URL, which changes if the API is re-created. */
  readonly domain?: DomainConfig;
  /** Each route's share of the requests the stage admits, as its function's catalog entry states it; they add up to the API's cap (docs/costs.md). */
  readonly throttle: ThrottleConfig;
  /** Days every log group of the stage keeps its lines (function logs and API access logs): one of CloudWatch's own retention periods. */
  readonly logRetention: RetentionDays;
  /** Memory of each function, in MB, as its catalog entry states it for the stage (shared/catalog/function-catalog.ts), chosen to meet `latencyGoals`. */
  readonly memoryMiB: Readonly<Record<FunctionName, number>>;
  readonly latencyGoals: LatencyGoals;
  readonly logLevel: LogLevel;
  readonly alarms: AlarmThresholds;
  /**
   * Who the stage's alarm topic notifies. Required in production (synthesis fails without it); may be
   * empty in staging, whose alarms then only show in CloudWatch and the stage's topic.
   */
  readonly alarmSubscriptions: readonly AlarmSubscription[];
  /** Alarms must reach a person: synthesis fails while `alarmSubscriptions` is empty. */
  readonly requiresAlarmSubscription: boolean;
  /**
   * Concurrent executions reserved for the authorizer, which fronts every route, so nothing else can starve
   * it. Undefined reserves none, as a fresh account's quota cannot spare any (docs/operations.md,
   * "Reserved concurrency for the authorizer").
   */
  readonly authorizerReservedConcurrency?: number;
  readonly cors: CorsConfig;
  /**
   * Generation of the key that signs pagination cursors. Bump it to rotate the key: the next deploy
   * replaces the secret, and cursors clients hold stop working (they restart the listing).
   */
  readonly cursorSecretGeneration: number;
  /**
   * Tables, log groups and the cursor secret outlive the stack and every update that would replace them
   * (RetainExceptOnCreate); otherwise `cdk destroy` removes them.
   */
  readonly retainsData: boolean;
  /** Refuses DeleteTable on the stage's tables, even from CloudFormation. */
  readonly deletionProtection: boolean;
  /** Refuses `cdk destroy` (DeleteStack) until someone turns it off on purpose. */
  readonly terminationProtection: boolean;
  /** Set only during a restore (docs/operations.md, "Restoring the pets table"): the pets table in use, by name. */
  readonly restoredPetsTable?: RestoredPetsTable;
  /** How listPets' indexes are spread over shards and read (docs/data-model.md). */
  readonly listing: ListingConfig;
}

/**
 * What both stages judge a new version by: a minimum the deployment traffic meets on an idle stage, and an excess
 * of answers a version as good as the old one reaches by chance too rarely to roll it back (the odds are in
 * docs/operations.md, "How a release reaches traffic").
 */
const NEW_VERSION_THRESHOLDS = {
  minimumRequests: 10,
  excessAnswers: 5,
  answerDeviations: 4,
  latencyFactor: 2,
  latencyMarginMs: 50,
} as const;

export const staging: StageConfig = {
  name: 'staging',
  stackName: 'AnimalStore-Staging',
  // Example values: put your staging account and region here (docs/operations.md, "2. Fill in the stages (once)").
  account: '111111111111',
  region: 'eu-west-1',
  // No custom domain, so staging deploys without owning one; it is called at its execute-api URL (the
  // BaseUrl output). Add one as production does once clients depend on it.
  // Allowing a browser origin adds the preflight route's share to the API's cap.
  throttle: throttleOf('staging'),
  logRetention: 14,
  memoryMiB: memoryOf('staging'),
  // Staging serves tests, not customers: a request meeting two cold functions stays within its p99 alarm.
  latencyGoals: { coldStartMs: 1_000, warmP99Ms: 100 },
  logLevel: 'DEBUG',
  alarms: {
    serverErrorRatePercent: 5,
    functionErrors: 5,
    functionThrottles: 5,
    dynamoDbThrottledRequests: 10,
    clientErrorRatePercent: 50,
    p99LatencyMs: 2_000,
    durationPercentOfTimeout: 80,
    minimumRequests: 20,
    // One-minute periods as in production: staging deploys by the same canary, and its alarms must be
    // able to fire within the canary's five minutes for a rollback to be rehearsed.
    periodMinutes: 1,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
    newVersion: { ...NEW_VERSION_THRESHOLDS, failureMarginPercent: 5, bakeFailurePercent: 10, bakeMeanDurationMs: 3_000 },
  },
  alarmSubscriptions: [],
  requiresAlarmSubscription: false,
  cors: { allowOrigins: [], maxAgeSeconds: PREFLIGHT_MAX_AGE_SECONDS },
  cursorSecretGeneration: 1,
  listing: LISTING,
  // Staging holds test data only: `cdk destroy` removes it completely.
  retainsData: false,
  deletionProtection: false,
  terminationProtection: false,
};

export const production: StageConfig = {
  name: 'production',
  stackName: 'AnimalStore-Production',
  // Example values: put your production account and region here (docs/operations.md, "2. Fill in the stages (once)").
  account: '222222222222',
  region: 'eu-west-1',
  // Example values: put your production domain and the public hosted zone it is in here, or a
  // certificateArn of its own region if the zone is not in this account (docs/operations.md, "Custom domain").
  // `.example` is reserved for documentation (RFC 2606): it never resolves, so nothing is called by mistake.
  domain: {
    domainName: 'api.animal-store.example',
    hostedZone: { hostedZoneId: 'Z0123456789EXAMPLE', zoneName: 'animal-store.example' },
  },
  throttle: throttleOf('production'),
  logRetention: 90,
  memoryMiB: memoryOf('production'),
  // A request meeting two cold functions (the authorizer and its route) answers within the p99 alarm,
  // with room for Lambda's own environment start and API Gateway.
  latencyGoals: { coldStartMs: 450, warmP99Ms: 50 },
  logLevel: 'INFO',
  alarms: {
    serverErrorRatePercent: 1,
    functionErrors: 1,
    functionThrottles: 1,
    dynamoDbThrottledRequests: 1,
    clientErrorRatePercent: 25,
    p99LatencyMs: 1_000,
    durationPercentOfTimeout: 80,
    minimumRequests: 20,
    // One-minute periods, two of three breaching: an alarm fires within the canary's five minutes,
    // so CodeDeploy rolls back before the new version takes all traffic.
    periodMinutes: 1,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
    newVersion: { ...NEW_VERSION_THRESHOLDS, failureMarginPercent: 1, bakeFailurePercent: 5, bakeMeanDurationMs: 2_000 },
  },
  // Example value: the on-call address or your ChatOps topic ({ topicArn: 'arn:aws:sns:…' }).
  alarmSubscriptions: [{ email: 'animal-store-oncall@example.com' }],
  requiresAlarmSubscription: true,
  cors: { allowOrigins: [], maxAgeSeconds: PREFLIGHT_MAX_AGE_SECONDS },
  cursorSecretGeneration: 1,
  listing: LISTING,
  // Customer data and access logs outlive the stack; deleting them is a deliberate manual act. A first
  // create whose rollback completes takes them with it; one that deletion protection stops leaves them
  // (docs/operations.md, "A first create that failed").
  retainsData: true,
  deletionProtection: true,
  terminationProtection: true,
};

/** Each route's share of a stage's throttle, from its function's catalog entry: the preflight route is routeNotFound's. */
export function throttleOf(stage: StageName): ThrottleConfig {
  const { routeNotFound } = FUNCTION_CATALOG;
  return {
    ...(Object.fromEntries(OPERATION_IDS.map((operation) => [operation, FUNCTION_CATALOG[operation].throttle[stage]])) as Record<
      OperationId,
      RouteThrottle
    >),
    routeNotFound: routeNotFound.throttle[stage],
    preflight: routeNotFound.preflightThrottle[stage],
  };
}

/** The routes a stage serves: the preflight route only when it allows browser origins. */
export function throttledRoutes(stage: Pick<StageConfig, 'cors'>): ThrottledRoute[] {
  return [...OPERATION_IDS, 'routeNotFound', ...(stage.cors.allowOrigins.length > 0 ? (['preflight'] as const) : [])];
}

/** The most the whole API admits: the sum of the shares of the routes the stage serves. */
export function apiThrottle(stage: Pick<StageConfig, 'cors' | 'throttle'>): RouteThrottle {
  return throttledRoutes(stage).reduce(
    (total, route) => ({
      rateLimit: total.rateLimit + stage.throttle[route].rateLimit,
      burstLimit: total.burstLimit + stage.throttle[route].burstLimit,
    }),
    { rateLimit: 0, burstLimit: 0 },
  );
}

/** The stages `cdk synth` produces, in promotion order. */
export const stages: readonly StageConfig[] = [staging, production];
