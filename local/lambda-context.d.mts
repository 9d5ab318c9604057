import type { Context } from 'aws-lambda';

export interface LambdaContextOptions {
  readonly functionName: string;
  readonly memoryLimitInMB: string | number;
  /** The function's timeout: getRemainingTimeInMillis counts down from it. */
  readonly timeoutMs: number;
  readonly awsRequestId: string;
  readonly logStreamName: string;
  /** The published version invoked, as Lambda numbers it; $LATEST unless given. */
  readonly functionVersion?: string;
  /** Of the function's ARN; us-east-1 unless given. */
  readonly region?: string;
  /** Of the function's ARN; 123456789012 unless given. */
  readonly accountId?: string;
}

export function createLambdaContext(options: LambdaContextOptions): Context;

export function lambdaContextFromEnvironment(awsRequestId: string, logStreamName: string): Context;
