import { AsyncLocalStorage } from 'node:async_hooks';
import { LEVELS, levelFromEnvironment, type LogLevel } from './log-level';
import { writeLine } from './output';
import { mapStackToSources } from './stack-traces';
import { SERVICE_NAME } from '../facts/service';

/**
 * One structured JSON logger per function instance, in the shape the log queries and dashboards read
 * (docs/observability.md). Our own, as a library's import costs too much of a cold start. Nothing logs
 * whole events: they carry the Authorization header.
 */

export type { LogLevel } from './log-level';

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

/** An error as a log value: its name, where it was thrown, message, stack, and its cause, in source positions. */
function serializeError(error: Error): Record<string, unknown> {
  // Mapped only here, as the entry is written: no error that goes unlogged has the bundle's map read.
  const stack = typeof error.stack === 'string' ? mapStackToSources(error.stack) : error.stack;
  // The first frame, `at fn (path:line:column)` or `at path:line:column`, as `path:line`.
  const frame = /(?:\(|at )([^()\s]+):(\d+):\d+\)?$/.exec(stack?.split('\n')[1] ?? '');
  const location = frame ? `${frame[1]}:${frame[2]}` : '';
  return {
    name: error.name,
    location,
    message: error.message,
    stack,
    ...causeOf(error, serializeError),
  };
}

/** An error's cause as a log entry's `cause` key: an Error described as its holder is, anything else as it is. */
function causeOf(error: Error, describe: (cause: Error) => Record<string, unknown>): { cause?: unknown } {
  if (error.cause instanceof Error) return { cause: describe(error.cause) };
  return error.cause === undefined ? {} : { cause: error.cause };
}

/**
 * An error as a log value without stacks: its name, message and code, and its cause's, for a failure whose kind says
 * where it came from (a dependency's outage), whose stacks would read the same frames on every request.
 */
export function summarizeError(error: Error): Record<string, unknown> {
  const { code } = error as { code?: unknown };
  return {
    name: error.name,
    message: error.message,
    ...(typeof code === 'string' ? { code } : {}),
    ...causeOf(error, summarizeError),
  };
}

/** The keys one invocation's entries carry: the Lambda context's and the appended ones. */
interface InvocationKeys {
  context: Record<string, unknown>;
  keys: Record<string, unknown>;
}

export class Logger {
  private readonly threshold: number;
  /** Each invocation's keys, so work an invocation left running never logs with another's requestId and keyId. */
  private readonly invocations = new AsyncLocalStorage<InvocationKeys>();
  /** The keys of entries made outside any invocation (at cold start, in a test or a tool). */
  private outside: InvocationKeys = { context: {}, keys: {} };
  private coldStart = true;

  constructor(
    private readonly serviceName: string,
    level: LogLevel = levelFromEnvironment(),
  ) {
    this.threshold = LEVELS[level];
  }

  /**
   * Runs one invocation with keys of its own, which addContext and appendKeys inside it (and in
   * anything it starts) set: they never reach an entry of another invocation, concurrent or later.
   */
  runInvocation<T>(run: () => T): T {
    return this.invocations.run({ context: {}, keys: {} }, run);
  }

  /** The keys of the running invocation, or those of entries made outside one. */
  private get current(): InvocationKeys {
    return this.invocations.getStore() ?? this.outside;
  }

  /** The Lambda context's keys on every entry of this invocation; the first invocation is the cold start. */
  addContext(context: LogContext): void {
    this.current.context = {
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
    Object.assign(this.current.keys, keys);
  }

  /** Forgets the appended keys and the context of the running invocation (or of entries outside one). */
  resetKeys(): void {
    const current = this.current;
    current.keys = {};
    current.context = {};
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
    const { context, keys } = this.current;
    const entry = { level, message, timestamp: new Date().toISOString(), service: this.serviceName, ...context, ...keys, ...own };
    // Warnings and errors to stderr, where a local reader can tell them apart; on Lambda both reach the same log.
    writeLine(LEVELS[level] >= LEVELS.WARN ? 'stderr' : 'stdout', JSON.stringify(entry));
  }
}

export const logger = new Logger(SERVICE_NAME);
