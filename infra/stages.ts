import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';

/** Powertools log levels the functions accept in POWERTOOLS_LOG_LEVEL. */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

export interface ThrottleConfig {
  /** Steady-state requests per second across the whole API (API Gateway's default route throttling). */
  readonly rateLimit: number;
  /** Requests API Gateway admits at once above the steady rate. */
  readonly burstLimit: number;
}

export interface AlarmThresholds {
  /** Share of requests, in percent, answered with a 5xx over one period that raises the API alarm. */
  readonly serverErrorRatePercent: number;
  /** Unhandled errors (crashes, timeouts, failed cold starts) of one function per period. */
  readonly functionErrors: number;
  /** Lambda throttles of one function per period. */
  readonly functionThrottles: number;
  /** DynamoDB requests throttled on one table per period. */
  readonly dynamoDbThrottledRequests: number;
  /** Length of one evaluation period. */
  readonly periodMinutes: number;
  /** Breaching periods, out of `evaluationPeriods`, that raise an alarm. */
  readonly datapointsToAlarm: number;
  /** Periods an alarm looks back over. */
  readonly evaluationPeriods: number;
}

export interface CorsConfig {
  /** Origins browsers may call the API from; empty means no CORS headers at all (no browser access). */
  readonly allowOrigins: readonly string[];
  /** How long browsers may cache a preflight answer, in seconds. */
  readonly maxAgeSeconds: number;
}

/** Everything that differs between two deployments of the animal store. */
export interface StageConfig {
  /** Short name: part of the stack name, tags and the functions' service name. */
  readonly name: string;
  /** CloudFormation stack name; unique per account and region, so stages can share an account. */
  readonly stackName: string;
  readonly throttle: ThrottleConfig;
  /** Retention of every log group of the stage: function logs and API access logs. */
  readonly logRetention: RetentionDays;
  /** Memory of every function, in MB; CPU share grows with it, so it also bounds cold-start time. */
  readonly memoryMiB: number;
  readonly logLevel: LogLevel;
  readonly alarms: AlarmThresholds;
  /** SNS topic the alarms notify, when ops have one; alarms still show in CloudWatch without it. */
  readonly alarmTopicArn?: string;
  readonly cors: CorsConfig;
  /**
   * Generation of the key that signs pagination cursors. Bump it to rotate the key: the next deploy
   * replaces the secret, and cursors clients hold stop working (they restart the listing).
   */
  readonly cursorSecretGeneration: number;
  /** What happens to tables, log groups and the cursor secret when they leave the stack. */
  readonly removalPolicy: RemovalPolicy;
  /** Refuses DeleteTable on the stage's tables, even from CloudFormation. */
  readonly deletionProtection: boolean;
  /** Refuses `cdk destroy` (DeleteStack) until someone turns it off on purpose. */
  readonly terminationProtection: boolean;
}

export const staging: StageConfig = {
  name: 'staging',
  stackName: 'AnimalStore-Staging',
  throttle: { rateLimit: 20, burstLimit: 40 },
  logRetention: RetentionDays.TWO_WEEKS,
  memoryMiB: 256,
  logLevel: 'DEBUG',
  alarms: {
    serverErrorRatePercent: 5,
    functionErrors: 5,
    functionThrottles: 5,
    dynamoDbThrottledRequests: 10,
    periodMinutes: 5,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
  },
  cors: { allowOrigins: [], maxAgeSeconds: 600 },
  cursorSecretGeneration: 1,
  // Staging holds test data only: `cdk destroy` removes it completely.
  removalPolicy: RemovalPolicy.DESTROY,
  deletionProtection: false,
  terminationProtection: false,
};

export const production: StageConfig = {
  name: 'production',
  stackName: 'AnimalStore-Production',
  throttle: { rateLimit: 200, burstLimit: 400 },
  logRetention: RetentionDays.THREE_MONTHS,
  memoryMiB: 512,
  logLevel: 'INFO',
  alarms: {
    serverErrorRatePercent: 1,
    functionErrors: 1,
    functionThrottles: 1,
    dynamoDbThrottledRequests: 1,
    periodMinutes: 5,
    datapointsToAlarm: 2,
    evaluationPeriods: 3,
  },
  cors: { allowOrigins: [], maxAgeSeconds: 600 },
  cursorSecretGeneration: 1,
  // Customer data and access logs outlive the stack; deleting them is a deliberate manual act.
  removalPolicy: RemovalPolicy.RETAIN,
  deletionProtection: true,
  terminationProtection: true,
};

/** The stages `cdk synth` produces, in promotion order. */
export const stages: readonly StageConfig[] = [staging, production];
