import * as v from 'valibot';
import { ENV } from '../facts/environment';
import { readConfig } from './config';

/**
 * The functions' log levels and how the configuration names one; apart from logger.ts, which makes the
 * instance's logger as it loads, so the local runtime and the stacks can check the setting.
 */

export const LEVELS = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

/** The application log level Lambda sets from the function's logging configuration. */
const LAMBDA_LOG_LEVEL = 'AWS_LAMBDA_LOG_LEVEL';

/** The other level names the POWERTOOLS_LOG_LEVEL convention accepts: TRACE logs what DEBUG does, CRITICAL what ERROR does. */
const ALIASES: Readonly<Record<string, LogLevel>> = { TRACE: 'DEBUG', CRITICAL: 'ERROR' };

const LogLevelSetting = v.optional(
  v.pipe(
    v.string(),
    v.trim(),
    v.toUpperCase(),
    v.check((name) => name in LEVELS || name in ALIASES, `must be one of ${[...Object.keys(LEVELS), ...Object.keys(ALIASES)].join(', ')}`),
    v.transform((name) => (ALIASES[name] ?? name) as LogLevel),
  ),
);

/**
 * What the logger reads: its level, from POWERTOOLS_LOG_LEVEL, else from Lambda's own application
 * log level, else INFO. Part of every function's configuration (shared/runtime/function-config.ts).
 */
export const LOGGER_CONFIG = { [ENV.logLevel]: LogLevelSetting, [LAMBDA_LOG_LEVEL]: LogLevelSetting } as const;

export function levelFromEnvironment(): LogLevel {
  const config = readConfig(v.object(LOGGER_CONFIG));
  return config[ENV.logLevel] ?? config[LAMBDA_LOG_LEVEL] ?? 'INFO';
}
