/** One list price: what it is for, in US dollars per unit. */
export interface Price {
  /** What is billed, as AWS's price list names it. */
  readonly item: string;
  readonly usd: number;
  readonly per: string;
}

/**
 * The one price table, for the region the stages deploy to: the bench bills with it and docs/costs.md is rendered from it
 * (`npm run costs`), which says where each price was read. First tiers, free tiers ignored unless said.
 */
export const PRICE_LIST = {
  httpApiPerMillionRequests: {
    item: 'API Gateway HTTP API requests (first 300 million a month; EU-ApiGatewayHttpRequest)',
    usd: 1.11,
    per: 'million requests',
  },
  lambdaPerMillionInvocations: { item: 'Lambda requests, arm64 (EU-Request-ARM)', usd: 0.2, per: 'million invocations' },
  lambdaArmPerGbSecond: {
    item: 'Lambda duration, arm64, INIT included (first 7.5 billion GB-s a month; EU-Lambda-GB-Second-ARM)',
    usd: 0.0000133334,
    per: 'GB-second',
  },
  dynamoDbPerMillionReadUnits: { item: 'DynamoDB on-demand reads (EU-ReadRequestUnits)', usd: 0.1415, per: 'million read request units' },
  dynamoDbPerMillionWriteUnits: {
    item: 'DynamoDB on-demand writes (EU-WriteRequestUnits)',
    usd: 0.705,
    per: 'million write request units',
  },
  dynamoDbPerGbMonth: { item: 'DynamoDB storage beyond the first 25 GB (EU-TimedStorage-ByteHrs)', usd: 0.283, per: 'GB-month' },
  pointInTimeRecoveryPerGbMonth: { item: 'DynamoDB point-in-time recovery (EU-TimedPITRStorage-ByteHrs)', usd: 0.22, per: 'GB-month' },
  logsPerGbIngested: {
    item: 'CloudWatch Logs ingestion, standard class: function logs and the access log (EU-DataProcessing-Bytes)',
    usd: 0.57,
    per: 'GB',
  },
  logsPerGbMonthStored: { item: 'CloudWatch Logs storage (EU-TimedStorage-ByteHrs)', usd: 0.03, per: 'GB-month' },
  alarmMetricPerMonth: {
    item: 'CloudWatch alarm metric, standard resolution (EU-CW:AlarmMonitorUsage; a metric-math alarm counts each metric it reads)',
    usd: 0.1,
    per: 'alarm metric-month',
  },
  customMetricPerMonth: {
    item: 'CloudWatch custom metric, first 10,000 (EU-CW:MetricMonitorUsage; prorated by the hours it is published)',
    usd: 0.3,
    per: 'metric-month',
  },
  dashboardPerMonth: {
    item: 'CloudWatch dashboard of more than 50 metrics, or beyond the account’s first three (pricing page)',
    usd: 3,
    per: 'dashboard-month',
  },
  secretPerMonth: { item: 'Secrets Manager secret (EU-AWSSecretsManager-Secrets)', usd: 0.4, per: 'secret-month' },
  secretsManagerPer10kCalls: { item: 'Secrets Manager API calls (EU-AWSSecretsManager-APIRequests)', usd: 0.05, per: '10,000 calls' },
  schedulerPerMillionInvocations: {
    item: 'EventBridge Scheduler invocations beyond the first 14 million a month (pricing page)',
    usd: 1,
    per: 'million invocations',
  },
  dataTransferOutPerGb: {
    item: 'Data transfer out to the internet, first 10 TB a month beyond the free 100 GB (EU-DataTransfer-Out-Bytes)',
    usd: 0.09,
    per: 'GB',
  },
  syntheticsCanaryPerRun: {
    item: 'CloudWatch Synthetics canary run (not used: the probe is a function; us-east-1 figure as quoted from the pricing page)',
    usd: 0.0012,
    per: 'canary run',
  },
  xrayPerMillionTracesRecorded: { item: 'X-Ray traces recorded (not used: docs/observability.md)', usd: 5, per: 'million traces' },
} as const satisfies Record<string, Price>;

/** The prices as plain numbers, for arithmetic, with the region and the date they were read. */
export const PRICES = {
  region: 'eu-west-1',
  readOn: '2026-11-25',
  ...(Object.fromEntries(Object.entries(PRICE_LIST).map(([name, price]) => [name, price.usd])) as Record<keyof typeof PRICE_LIST, number>),
} as const;
