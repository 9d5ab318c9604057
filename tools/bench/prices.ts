/**
 * Public on-demand list prices the bill is computed from, in US dollars, for US East (N. Virginia):
 * the region AWS's pricing pages quote first. The stages deploy to eu-west-1 (infra/stages.ts), where
 * most of these are 5 to 15 % higher; the ratios between operations do not change.
 *
 * Read on 2026-11-23 from AWS's pricing pages as mirrored in AWS documentation and blogs available
 * here (no live AWS page is reachable from this machine): check them against
 * https://aws.amazon.com/api-gateway/pricing/, /lambda/pricing/, /dynamodb/pricing/on-demand/ and
 * /cloudwatch/pricing/ before quoting a figure. First-tier prices, free tier ignored.
 */
export const PRICES = {
  readOn: '2026-11-23',
  region: 'us-east-1',
  /** HTTP API, per million requests (first 300 million a month). */
  httpApiPerMillionRequests: 1.0,
  /** Lambda, per million invocations (any architecture). */
  lambdaPerMillionInvocations: 0.2,
  /** Lambda on arm64, per GB-second of duration (first 7.5 billion GB-s a month); INIT is billed too since 2025-08-01. */
  lambdaArmPerGbSecond: 0.0000133334,
  /** DynamoDB on-demand, per million read request units (after the November 2024 price cut). */
  dynamoDbPerMillionReadUnits: 0.125,
  /** DynamoDB on-demand, per million write request units. */
  dynamoDbPerMillionWriteUnits: 0.625,
  /** CloudWatch Logs, per GB ingested (standard log class; Lambda and vended logs' first tier). */
  logsPerGbIngested: 0.5,
} as const;
