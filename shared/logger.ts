import { Logger } from '@aws-lambda-powertools/logger';

/**
 * One structured JSON logger per function instance. Level, service name and sampling come from
 * Powertools' own variables (POWERTOOLS_LOG_LEVEL, POWERTOOLS_SERVICE_NAME), set per stage.
 * Nothing logs whole events: they carry the Authorization header.
 */
export const logger = new Logger({ serviceName: 'animal-store' });
