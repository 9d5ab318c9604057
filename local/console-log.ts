import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { matchRoute } from '../shared/facts/routes';
import { type OutputDestination, writeLine } from '../shared/runtime/output';

/**
 * How the local API's console reads: `pretty` for a person at a terminal (one line per request,
 * Lambda's START and REPORT lines, errors with their stack), `json` for a program: every line
 * exactly as Lambda writes it to CloudWatch, metric documents included.
 */
export type LogFormat = 'pretty' | 'json';

const LOG_FORMATS: readonly LogFormat[] = ['pretty', 'json'];

/** LOG_FORMAT, else pretty when the console is a terminal and JSON when it is a file or a pipe. */
export function logFormatFrom(name: string, value: string | undefined, isTerminal: boolean): LogFormat {
  if (value === undefined || value === '') return isTerminal ? 'pretty' : 'json';
  const format = value.trim().toLowerCase();
  if (!(LOG_FORMATS as readonly string[]).includes(format)) throw new Error(`${name} must be ${LOG_FORMATS.join(' or ')}, got "${value}"`);
  return format as LogFormat;
}

/** Lambda's system log levels: START and REPORT are INFO lines, so WARN leaves them out, as on Lambda. */
export const SYSTEM_LOG_LEVELS = ['DEBUG', 'INFO', 'WARN'] as const;
export type SystemLogLevel = (typeof SYSTEM_LOG_LEVELS)[number];

/** SYSTEM_LOG_LEVEL: which of the runtime's own lines are written; INFO, Lambda's default, unless set. */
export function systemLogLevelFrom(name: string, value: string | undefined): SystemLogLevel {
  if (value === undefined || value === '') return 'INFO';
  const level = value.trim().toUpperCase();
  if (!(SYSTEM_LOG_LEVELS as readonly string[]).includes(level))
    throw new Error(`${name} must be ${SYSTEM_LOG_LEVELS.join(', ')}, got "${value}"`);
  return level as SystemLogLevel;
}

/** LOG_METRICS: whether the pretty console shows the functions' metric documents (the JSON console always does). */
export function showMetricsFrom(name: string, value: string | undefined): boolean {
  if (value === undefined || value === '' || value === '0' || value.toLowerCase() === 'false') return false;
  if (value === '1' || value.toLowerCase() === 'true') return true;
  throw new Error(`${name} must be 1 or 0, got "${value}"`);
}

export interface ConsoleLogOptions {
  readonly format: LogFormat;
  /** Show metric documents as METRIC lines in the pretty format; hidden by default. */
  readonly showMetrics?: boolean;
  /** Where the lines go; this process's one writer unless a test says otherwise. */
  readonly write?: OutputDestination;
}

/**
 * The writer the local API hands every console line to: the functions' output, the platform lines
 * the runtime writes for each invocation, the access log and the server's own notes. In `json` it
 * passes each line through unchanged; in `pretty` it renders each for a person.
 */
export function createConsoleLog(options: ConsoleLogOptions): OutputDestination {
  const write = options.write ?? writeLine;
  if (options.format === 'json') return write;
  // The function each running invocation belongs to, by Lambda request id: the runtime's own error
  // line names only the request.
  const functions = new Map<string, string>();
  return (stream, line) => {
    const entry = parseObject(line);
    const rendered = entry === undefined ? [line] : render(entry, functions, options.showMetrics ?? false);
    for (const each of rendered) write(stream, each);
  };
}

type Entry = Record<string, unknown>;

function parseObject(line: string): Entry | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Entry) : undefined;
  } catch {
    return undefined;
  }
}

/** The lines one JSON line becomes; none for a metric document unless metrics are shown. */
function render(entry: Entry, functions: Map<string, string>, showMetrics: boolean): string[] {
  if (typeof entry.type === 'string' && entry.type.startsWith('platform.')) return [renderPlatform(entry, functions)];
  if (typeof entry.httpMethod === 'string' && typeof entry.status === 'number') return [renderRequest(entry)];
  if (typeof entry._aws === 'object' && entry._aws !== null) return showMetrics ? [renderMetrics(entry)] : [];
  if (typeof entry.errorType === 'string') return renderUncaught(entry, functions);
  if (typeof entry.message === 'string') return renderEntry(entry, functions);
  return [JSON.stringify(entry)];
}

/** One line per request: method, path, status, duration and the function its route invokes. */
function renderRequest(entry: Entry): string {
  const method = String(entry.httpMethod);
  const path = String(entry.path);
  const name = matchRoute(method, path)?.route.operationId ?? 'routeNotFound';
  return `${method} ${path} ${entry.status} ${entry.responseLatency} ms  ${name}`;
}

/** Lambda's START and REPORT lines, as its text log format writes them, with the function's name first. */
function renderPlatform(entry: Entry, functions: Map<string, string>): string {
  const record = (entry.record ?? {}) as Entry;
  const requestId = String(record.requestId);
  const fn = String(entry.function ?? functions.get(requestId) ?? '');
  const status = record.status !== undefined && record.status !== 'success' ? `  Status: ${record.status}` : '';
  switch (entry.type) {
    case 'platform.start':
      functions.set(requestId, fn);
      return `START ${fn} RequestId: ${requestId} Version: ${record.version ?? '$LATEST'}`;
    case 'platform.report': {
      functions.delete(requestId);
      const metrics = (record.metrics ?? {}) as Entry;
      const init = metrics.initDurationMs === undefined ? '' : `  Init Duration: ${metrics.initDurationMs} ms`;
      return (
        `REPORT ${fn} RequestId: ${requestId}  Duration: ${metrics.durationMs} ms  Billed Duration: ${metrics.billedDurationMs} ms  ` +
        `Memory Size: ${metrics.memorySizeMB} MB  Max Memory Used: ${metrics.maxMemoryUsedMB} MB${init}${status}`
      );
    }
    default:
      return `${String(entry.type)} ${fn} ${JSON.stringify(record)}`;
  }
}

/** A metric document as the values it publishes: `METRIC ColdStart=1 Count`. */
function renderMetrics(entry: Entry): string {
  const directives = ((entry._aws as Entry).CloudWatchMetrics ?? []) as Array<{ Metrics?: Array<{ Name: string; Unit?: string }> }>;
  const values = directives.flatMap((directive) =>
    (directive.Metrics ?? []).map(
      (metric) => `${metric.Name}=${JSON.stringify(entry[metric.Name])}${metric.Unit ? ` ${metric.Unit}` : ''}`,
    ),
  );
  return `METRIC ${values.join('  ')}`;
}

/** The Lambda runtime's line for an error the function threw: type, message, then the stack. */
function renderUncaught(entry: Entry, functions: Map<string, string>): string[] {
  const fn = typeof entry.requestId === 'string' ? functions.get(entry.requestId) : undefined;
  const head = `${entry.level ?? 'ERROR'}${fn ? ` ${fn}` : ''} ${entry.errorType}: ${entry.errorMessage}`;
  const stack = Array.isArray(entry.stackTrace) ? entry.stackTrace.map(String) : [];
  // A stack's first line repeats the type and message.
  return [head, ...indent(stack.slice(stack[0]?.includes(String(entry.errorMessage)) ? 1 : 0))];
}

/** Keys every structured line carries that a person at the console does not need again. */
const QUIET_KEYS = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'function',
  'function_name',
  'function_memory_size',
  'function_arn',
  'function_request_id',
  'cold_start',
  'error',
  'stack',
]);

/** The functions' prefix on a local instance's function name (local/functions.ts), left off the console. */
const LOCAL_FUNCTION_PREFIX = 'animal-store-local-';

/**
 * A structured line (the functions' logger, a failure the server reports): its level, the function
 * it came from, its message and its own keys on one line, then an error's stack, indented.
 */
function renderEntry(entry: Entry, functions: Map<string, string>): string[] {
  const fn =
    typeof entry.function === 'string'
      ? entry.function
      : typeof entry.function_name === 'string'
        ? entry.function_name.replace(LOCAL_FUNCTION_PREFIX, '')
        : // The authorizer's lines name its invocation as invocationId.
          functions.get(String(entry.function_request_id ?? entry.invocationId));
  const keys = Object.entries(entry)
    .filter(([key, value]) => !QUIET_KEYS.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  const head = [entry.level, fn, entry.message].filter((part) => typeof part === 'string' && part !== '').join(' ');
  return [[head, ...keys].join('  '), ...indent(stackOf(entry))];
}

/** The stack a structured line carries, on its own or in its `error`, with its causes'. */
function stackOf(entry: Entry): string[] {
  if (typeof entry.stack === 'string') return entry.stack.split('\n');
  const error = entry.error as Entry | undefined;
  if (typeof error !== 'object' || error === null) return [];
  const own = typeof error.stack === 'string' ? error.stack.split('\n') : [`${error.name}: ${error.message}`];
  const cause = typeof error.cause === 'object' && error.cause !== null ? stackOf({ error: error.cause }) : [];
  return [...own, ...(cause.length > 0 ? [`Caused by: ${cause[0]}`, ...cause.slice(1)] : [])];
}

/** Stack lines indented under their entry, with paths inside the project relative to it, as an editor opens them. */
function indent(lines: readonly string[]): string[] {
  return lines.map((line) => `    ${line.trimStart().replaceAll(PROJECT_FOLDER, '')}`);
}

const PROJECT_FOLDER = `${PROJECT_ROOT.replace(/\/+$/, '')}/`;
