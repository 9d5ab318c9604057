import { Logger } from '@aws-lambda-powertools/logger';
import { SERVICE_NAME } from './service';

/**
 * One structured JSON logger per function instance. The level comes from POWERTOOLS_LOG_LEVEL, set
 * per stage (on AWS, Lambda's application log level is the same and filters first); the service name
 * is SERVICE_NAME, here and in every metric. Nothing logs whole events: they carry the Authorization header.
 */
export const logger = new Logger({ serviceName: SERVICE_NAME });
