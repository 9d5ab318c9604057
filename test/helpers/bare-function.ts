import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ApiFunctionProps } from '../../infra/api-function';

/** The settings of an ApiFunction on a bare Stack that a test does not vary: a stage's, as production sets them. */
export const BARE_FUNCTION_SETTINGS = {
  memoryMiB: 512,
  logLevel: 'INFO',
  metricsNamespace: 'AnimalStore/test',
  logRetention: RetentionDays.ONE_MONTH,
  removalPolicy: RemovalPolicy.RETAIN,
} as const satisfies Partial<ApiFunctionProps>;
