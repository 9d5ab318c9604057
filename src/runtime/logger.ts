import { ENV } from '../facts/environment';
import { writeLine } from './output';
import { SERVICE_NAME } from '../facts/service';

/**
 * One structured JSON logger per function instance: a JSON object per line, shaped as Powertools
 * Logger writes it (`level`, `message`, `timestamp`, `service`, the Lambda context's `function_*`
 * and `cold_start` keys, then the appended keys and the entry's own), so the log queries and the
 * dashboards read it the same way. The level comes from POWERTOOLS_LOG_LEVEL, read once at cold
 * start and set per stage (on AWS, Lambda's application log level is the same and filters first);
 * the service name is SERVICE_NAME, here and in every metric. Nothing logs whole events: they
 * carry the Authorization header.
 *
 * Written here rather than with Powertools Logger, by measurement (`npm run bench`): importing and
 * constructing it took 3.6 ms of getPet's cold start (102.5 ms against 98.8 ms with a logger like
 * this one, median of 31 alternated runs, Node 24), more than half of what the function then spent
 * above its floor and, alone, most of the 5 % the functions are allowed; and it added about 20 KiB
 * to every bundle. What the functions use of it (levels, persistent keys, the Lambda context,
 * errors) is this file.
 */

const LEVELS = { DEBUG: 10, INFO: 20, WARN: 30, ERROR: 40, SILENT: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

/** What the logger reads of Lambda's context object. */
export interface LogContext {
  readonly functionName: string;
  readonly awsRequestId: string;
  readonly invokedFunctionArn?: string;
  readonly memoryLimitInMB?: string | number;
  readonly functionVersion?: string;
}

/** What an entry may carry besides its message: an error, a note, or keys of its own. */
export type LogExtra = Error | string | Readonly<Record<string, unknown>>;

function levelFromEnvironment(): LogLevel {
  const configured = (process.env[ENV.logLevel] ?? process.env.AWS_LAMBDA_LOG_LEVEL ?? 'INFO').trim().toUpperCase();
  if (configured in LEVELS) return configured as LogLevel;
  // Powertools' other names: TRACE logs everything DEBUG does, CRITICAL what ERROR does.
  if (configured === 'TRACE') return 'DEBUG';
  if (configured === 'CRITICAL') return 'ERROR';
  throw new Error(`Invalid configuration: ${ENV.logLevel} must be one of ${Object.keys(LEVELS).join(', ')}, not ${configured}`);
}

/** An error as a log value: its name, where it was thrown, message, stack, and its cause. */
function serializeError(error: Error): Record<string, unknown> {
  // The first frame, `at fn (path:line:column)` or `at path:line:column`, as `path:line`.
  const frame = /(?:\(|at )([^()\s]+):(\d+):\d+\)?$/.exec(error.stack?.split('\n')[1] ?? '');
  const location = frame ? `${frame[1]}:${frame[2]}` : '';
  return {
    name: error.name,
    location,
    message: error.message,
    stack: error.stack,
    ...(error.cause instanceof Error ? { cause: serializeError(error.cause) } : error.cause === undefined ? {} : { cause: error.cause }),
  };
}

export class Logger {
  private readonly threshold: number;
  private context: Record<string, unknown> = {};
  private keys: Record<string, unknown> = {};
  private coldStart = true;

  constructor(
    private readonly serviceName: string,
    level: LogLevel = levelFromEnvironment(),
  ) {
    this.threshold = LEVELS[level];
  }

  /** The Lambda context's keys on every entry of this invocation; the first invocation is the cold start. */
  addContext(context: LogContext): void {
    this.context = {
      cold_start: this.coldStart,
      function_name: context.functionName,
      function_memory_size: context.memoryLimitInMB === undefined ? undefined : Number(context.memoryLimitInMB),
      function_arn: context.invokedFunctionArn,
      function_request_id: context.awsRequestId,
    };
    this.coldStart = false;
  }

  /** Keys on every entry until resetKeys. */
  appendKeys(keys: Readonly<Record<string, unknown>>): void {
    Object.assign(this.keys, keys);
  }

  /** Forgets the appended keys and the context: each invocation starts clean. */
  resetKeys(): void {
    this.keys = {};
    this.context = {};
  }

  debug(message: string, extra?: LogExtra): void {
    this.write('DEBUG', message, extra);
  }

  info(message: string, extra?: LogExtra): void {
    this.write('INFO', message, extra);
  }

  warn(message: string, extra?: LogExtra): void {
    this.write('WARN', message, extra);
  }

  error(message: string, extra?: LogExtra): void {
    this.write('ERROR', message, extra);
  }

  private write(level: Exclude<LogLevel, 'SILENT'>, message: string, extra: LogExtra | undefined): void {
    if (LEVELS[level] < this.threshold) return;
    const own =
      extra === undefined ? {} : extra instanceof Error ? { error: serializeError(extra) } : typeof extra === 'string' ? { extra } : extra;
    const entry = { level, message, timestamp: new Date().toISOString(), service: this.serviceName, ...this.context, ...this.keys, ...own };
    // Warnings and errors go to stderr, as Powertools writes them.
    writeLine(LEVELS[level] >= LEVELS.WARN ? 'stderr' : 'stdout', JSON.stringify(entry));
  }
}

export const logger = new Logger(SERVICE_NAME);
