import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { API_FUNCTIONS } from '../shared/facts/function-names';
import { ENV } from '../shared/facts/environment';
import {
  createLocalClient,
  DEFAULT_DYNAMODB_PORT,
  LOCAL_TABLES,
  prepareLocalStage,
  startDynalite,
  type LocalDynamoDb,
} from './dynamodb-local';
import { apiFunctionNamed, EnvVarsFileError, readEnvVarsFile } from './env-vars';
import { functionConfigProblems, localFunctionEnvironment, shellSettingRefusals } from './config-check';
import { createConsoleLog, logFormatFrom, showMetricsFrom, systemLogLevelFrom, type SystemLogLevel } from './console-log';
import { createFunctionRuntime, type FunctionFailure } from './functions';
import { issueTemporaryLocalKey } from './temporary-key';
import { findLocalStore, type FoundAddress } from './addresses';
import { messageOf } from '../shared/runtime/error-message';

/**
 * `npm run invoke -- <function> <event.json>`: invokes one function with an event file, as `sam local
 * invoke` does, against the DynamoDB of a running `npm start` when there is one, else an in-memory one.
 */

/** The bearer key local/events/authorizer.json carries, which invoke replaces with a key it issues. */
const SAMPLE_KEY_PLACEHOLDER = 'replace-with-your-dev-api-key';

const usage = `Usage: npm run invoke -- <function> <event.json | -> [--env-vars <file>] [--path-parameter <name>=<value>]

  <function>          ${API_FUNCTIONS.join(', ')}
  <event>             a JSON event file (see local/events/), or - to read it from standard input
  --env-vars <file>   per-function environment overrides, as npm start takes them in ENV_VARS
                      (docs/local-development.md); ENV_VARS is read when this is not given
  --path-parameter    sets one of the event's path parameters and its path, e.g. petId=<an id createPet printed>

The authorizer's sample event carries the placeholder key "${SAMPLE_KEY_PLACEHOLDER}": invoke
replaces it with a key of its own in the local store, revoked once the invocation is done.

Environment: DYNAMODB_PORT (default ${DEFAULT_DYNAMODB_PORT}) or DYNAMODB_ENDPOINT, as npm start read them, to find
its DynamoDB; DATA_DIR to use an on-disk store when none is running, CURSOR_SECRET for listPets
cursors, LOG_FORMAT (pretty or json) and LOG_METRICS=1 for the function's log lines, written to stderr.`;

/** Where a run of invoke reads its settings and its input, and writes what it prints: the process's own, or a test's. */
export interface InvokeIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Standard input's text, read only for the event `-`. */
  readonly readStdin: () => Promise<string>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal: the function's lines read pretty there unless LOG_FORMAT says. */
  readonly stderrIsTTY: boolean;
}

/** Bad input: one line (or one per problem) and exit 2, without a stack; the usage only when asked for. */
class Refusal extends Error {
  constructor(
    readonly lines: readonly string[],
    readonly withUsage = false,
  ) {
    super(lines.join('\n'));
  }
}

function refuse(lines: readonly string[], withUsage = false): never {
  throw new Refusal(lines, withUsage);
}

/** Runs `npm run invoke` with these arguments; resolves to its exit status. */
export async function runInvoke(args: readonly string[], io: InvokeIo): Promise<number> {
  try {
    return await invoke(args, io);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    io.stderr(`${error.lines.join('\n')}\n${error.withUsage ? `\n${usage}\n` : ''}`);
    return 2;
  }
}

async function invoke(args: readonly string[], io: InvokeIo): Promise<number> {
  const { env } = io;
  let parsed: ReturnType<typeof parseInvokeArgs>;
  try {
    parsed = parseInvokeArgs(args);
  } catch (error) {
    refuse([messageOf(error)], true);
  }
  const { values: options, positionals } = parsed;
  const [target, eventPath] = positionals;
  if (options.help) {
    io.stdout(`${usage}\n`);
    return 0;
  }
  if (!target || !eventPath || positionals.length > 2) refuse(['Give a function and an event file.'], true);
  const name = apiFunctionNamed(target);
  if (name === undefined) refuse([`Unknown function "${target}"; the functions are ${API_FUNCTIONS.join(', ')}.`]);

  const shellRefusals = shellSettingRefusals(env);
  if (shellRefusals.length > 0) refuse(shellRefusals);
  // The running npm start's store, where the settings it read put it.
  let running: FoundAddress;
  try {
    running = findLocalStore(env);
  } catch (error) {
    refuse([messageOf(error)]);
  }
  const event = withPathParameters(await readEvent(eventPath, io), options['path-parameter'] ?? []);
  const envVarsFile = options['env-vars'] || env.ENV_VARS || undefined;
  const overrides = envVarsFile === undefined ? undefined : await readEnvVarsFile(envVarsFile).catch(refuseEnvVars);
  const cursorSecret = env[ENV.cursorSecret] || 'local-invoke-cursor-secret-not-for-production';
  // The same check npm start makes: a value the function would refuse at cold start is named here.
  const configProblems = functionConfigProblems((name) => localFunctionEnvironment(cursorSecret, overrides?.(name)));
  if (configProblems.length > 0) refuse(configProblems.map((line) => `${envVarsFile ?? 'The environment'}: ${line}`));

  // The function's lines and its START and REPORT lines go to stderr, read as `npm start`'s console
  // is: stdout holds the result alone, for a pipe.
  let output: ReturnType<typeof createConsoleLog>;
  let systemLogLevel: SystemLogLevel;
  try {
    systemLogLevel = systemLogLevelFrom('SYSTEM_LOG_LEVEL', env.SYSTEM_LOG_LEVEL);
    const format = logFormatFrom('LOG_FORMAT', env.LOG_FORMAT, io.stderrIsTTY);
    const showMetrics = showMetricsFrom('LOG_METRICS', env.LOG_METRICS);
    output = createConsoleLog({ format, showMetrics, write: (_stream, line) => io.stderr(`${line}\n`) });
  } catch (error) {
    refuse([messageOf(error)]);
  }

  let store: LocalDynamoDb | undefined;
  let revokeSampleKey: (() => Promise<unknown>) | undefined;
  /** The function's failure, told once, as the local API tells it: what happened and where. */
  let failure: FunctionFailure | undefined;
  try {
    let endpoint = running.url;
    if (await isDynamoDbAt(running.url)) {
      io.stderr(`Using the running local API's DynamoDB at ${running.told}\n`);
    } else {
      store = await startDynalite({
        port: 0,
        dataDir: env.DATA_DIR ? resolve(env.DATA_DIR) : undefined,
        onIndexRepair: (message) => io.stderr(`${message}\n`),
      });
      endpoint = store.endpoint;
      io.stderr(`No local API's DynamoDB at ${running.told}; using a ${env.DATA_DIR ? 'on-disk' : 'throwaway in-memory'} one\n`);
    }
    const environment = await prepareLocalStage(endpoint, cursorSecret);
    if (name === 'authorizer') revokeSampleKey = await replaceSampleKey(event, endpoint, io);

    const runtime = await createFunctionRuntime({
      environment,
      environmentOf: overrides,
      output,
      systemLogLevel,
      onFunctionError: (reported) => (failure = reported),
    });
    const result = await runtime.invoke(name, event).finally(() => runtime.close());
    io.stdout(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (error) {
    // A function's own failure in one line (its stack, if it threw, is in its log line above); anything else with its stack.
    const told = failure?.message ?? (error instanceof Error ? (error.stack ?? error.message) : String(error));
    io.stderr(`Invocation failed: ${told}\n`);
    return 1;
  } finally {
    await revokeSampleKey?.();
    await store?.close();
  }
}

function parseInvokeArgs(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      'env-vars': { type: 'string' },
      'path-parameter': { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/** The event, parsed; a missing or malformed file is refused in one line. */
async function readEvent(path: string, io: InvokeIo): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = path === '-' ? await io.readStdin() : await readFile(resolve(path), 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    refuse([`Cannot read the event file ${path}: ${code === 'ENOENT' ? 'no such file' : messageOf(error)}`]);
  }
  const source = path === '-' ? 'The event on standard input' : path;
  let event: unknown;
  try {
    event = JSON.parse(text);
  } catch (error) {
    refuse([`${source} is not JSON: ${messageOf(error)}`]);
  }
  if (typeof event !== 'object' || event === null || Array.isArray(event)) refuse([`${source} must hold a JSON object (an event)`]);
  return event as Record<string, unknown>;
}

/**
 * The event with each `name=value` set as a path parameter, and its paths rebuilt from its route
 * key's template, so that the handler sees one consistent request.
 */
function withPathParameters(event: Record<string, unknown>, assignments: readonly string[]): Record<string, unknown> {
  if (assignments.length === 0) return event;
  const parameters = { ...(event.pathParameters as Record<string, string> | undefined) };
  for (const assignment of assignments) {
    const [, name, value] = /^([^=]+)=(.*)$/.exec(assignment) ?? [];
    if (name === undefined || value === undefined) refuse([`--path-parameter takes <name>=<value>, got "${assignment}"`]);
    parameters[name] = value;
  }
  const template = typeof event.routeKey === 'string' ? event.routeKey.split(' ')[1] : undefined;
  if (template === undefined) return { ...event, pathParameters: parameters };
  const path = template.replace(/\{([^}+]+)\+?\}/g, (whole, name: string) =>
    parameters[name] === undefined ? whole : encodeURIComponent(parameters[name]),
  );
  const context = (event.requestContext ?? {}) as Record<string, unknown>;
  const http = (context.http ?? {}) as Record<string, unknown>;
  return { ...event, pathParameters: parameters, rawPath: path, requestContext: { ...context, http: { ...http, path } } };
}

function refuseEnvVars(error: unknown): never {
  if (error instanceof EnvVarsFileError) refuse(error.lines);
  throw error;
}

/**
 * When the event carries the sample's placeholder key, issues a key in the store the invocation
 * uses and puts it in the event, so the sample shows an accepted key; returns what revokes it.
 */
async function replaceSampleKey(
  event: Record<string, unknown>,
  endpoint: string,
  io: InvokeIo,
): Promise<(() => Promise<unknown>) | undefined> {
  const headers = event.headers as Record<string, string> | undefined;
  if (headers?.authorization !== `Bearer ${SAMPLE_KEY_PLACEHOLDER}`) return undefined;
  const client = createLocalClient(endpoint);
  const key = await issueTemporaryLocalKey(documentClientOver(client), 'npm run invoke (sample event)');
  headers.authorization = `Bearer ${key.apiKey}`;
  io.stderr(`Replaced the sample's placeholder key with ${key.keyId}, issued for this invocation\n`);
  return () => key.revoke().finally(() => client.destroy());
}

async function isDynamoDbAt(endpoint: string): Promise<boolean> {
  const client = createLocalClient(endpoint, { maxAttempts: 1, requestHandler: { connectionTimeout: 300, requestTimeout: 1_000 } });
  try {
    const { TableNames = [] } = await client.send(new ListTablesCommand({}));
    return TableNames.includes(LOCAL_TABLES.pets);
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  process.exitCode = await runInvoke(process.argv.slice(2), {
    env: process.env,
    readStdin,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stderrIsTTY: process.stderr.isTTY === true,
  });
}
