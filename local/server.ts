import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PREFLIGHT_MAX_AGE_SECONDS } from '../shared/http/cors-policy';
import { ENV } from '../shared/facts/environment';
import { createConsoleLog, logFormatFrom, showMetricsFrom, systemLogLevelFrom } from './console-log';
import { parseAllowedOrigins } from './cors';
import { DEFAULT_DYNAMODB_PORT, DYNALITE_HOST } from './dynamodb-local';
import { shellSettingRefusals } from './config-check';
import { EnvVarsFileError, readEnvVarsFile } from './env-vars';
import { startLocalApi, type LocalApi } from './local-api';
import { DEFAULT_PORT, listenRefusal } from './listen';
import { endpointFrom, hostFrom, portFrom } from './addresses';
import { messageOf } from '../shared/runtime/error-message';

/**
 * `npm start`: serves the API on this machine. Configuration comes from the environment
 * (docs/local-development.md, "Configuration"); `--watch` (npm run dev) reloads handlers when their source changes.
 */

/** Where npm start reads its settings and writes its banner and refusals: the process's own, or a test's. */
export interface ServerIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Whether stdout is a terminal: the console reads pretty there unless LOG_FORMAT says. */
  readonly stdoutIsTTY: boolean;
}

/**
 * Starts the local API as npm start does, with these arguments and settings, and prints its banner; undefined when it
 * refuses to start, having named every problem on stderr, one line each (npm start then exits with status 1). The
 * running server's console goes through this process's one writer, as its functions' lines do.
 */
export async function startServer(args: readonly string[], io: ServerIo): Promise<LocalApi | undefined> {
  const { env } = io;
  /** Every bad setting, one line each: a developer fixes them all in one go, not one per start. */
  const problems: string[] = [];
  const refuseToStart = (lines: readonly string[]): undefined => {
    for (const line of lines) io.stderr(`Could not start the local API: ${line}\n`);
    return undefined;
  };

  /** One setting, read by `parse`; undefined when it is bad, noted in `problems`. */
  function setting<T>(parse: () => T): T | undefined {
    try {
      return parse();
    } catch (error) {
      problems.push(messageOf(error));
      return undefined;
    }
  }

  function noteEnvVarsProblems(error: unknown): undefined {
    if (!(error instanceof EnvVarsFileError)) throw error;
    problems.push(...error.lines);
    return undefined;
  }

  let flags: { watch: boolean; 'env-vars'?: string };
  try {
    ({ values: flags } = parseArgs({
      args: [...args],
      options: { watch: { type: 'boolean', default: false }, 'env-vars': { type: 'string' } },
    }));
  } catch (error) {
    // An unknown option is named like every other refusal, not thrown as a stack trace.
    return refuseToStart([messageOf(error)]);
  }

  try {
    const dynamoDbEndpoint = setting(() => endpointFrom(env, 'DYNAMODB_ENDPOINT'));
    const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : undefined;
    if (dynamoDbEndpoint !== undefined && dataDir !== undefined) {
      problems.push('DATA_DIR applies to the embedded DynamoDB only; unset it when DYNAMODB_ENDPOINT is set.');
    }
    const allowOrigins = setting(() => parseAllowedOrigins('CORS_ALLOW_ORIGINS', env.CORS_ALLOW_ORIGINS)) ?? [];
    const port = setting(() => portFrom(env, 'PORT', DEFAULT_PORT));
    const host = hostFrom(env);
    const dynamoDbPort = setting(() => portFrom(env, 'DYNAMODB_PORT', DEFAULT_DYNAMODB_PORT));
    // Every port already taken, named at once before anything starts: else the API's shows only once the store's is free.
    const taken = await Promise.all([
      port === undefined ? undefined : listenRefusal(port, host, 'PORT', 'HOST'),
      dynamoDbPort === undefined || dynamoDbEndpoint !== undefined
        ? undefined
        : listenRefusal(dynamoDbPort, DYNALITE_HOST, 'DYNAMODB_PORT'),
    ]);
    problems.push(...taken.filter((refusal) => refusal !== undefined));
    // SAM's --env-vars: per-function overrides, checked with the rest before anything starts.
    const envVarsFile = flags['env-vars'] || env.ENV_VARS || undefined;
    const overrides = envVarsFile === undefined ? undefined : await readEnvVarsFile(envVarsFile).catch(noteEnvVarsProblems);
    const logFormat = setting(() => logFormatFrom('LOG_FORMAT', env.LOG_FORMAT, io.stdoutIsTTY));
    const showMetrics = setting(() => showMetricsFrom('LOG_METRICS', env.LOG_METRICS));
    const systemLogLevel = setting(() => systemLogLevelFrom('SYSTEM_LOG_LEVEL', env.SYSTEM_LOG_LEVEL));
    problems.push(...shellSettingRefusals(env));
    if (problems.length > 0 || port === undefined || dynamoDbPort === undefined || logFormat === undefined) return refuseToStart(problems);
    // Every line the server and its functions write, rendered for a person at a terminal or passed on as JSON.
    const output = createConsoleLog({ format: logFormat, showMetrics });

    const api = await startLocalApi({
      dynamoDbEndpoint,
      cors: { allowOrigins, maxAgeSeconds: PREFLIGHT_MAX_AGE_SECONDS },
      port,
      host,
      dynamoDbPort,
      dataDir,
      devApiKey: env.DEV_API_KEY || undefined,
      cursorSecret: env[ENV.cursorSecret] || undefined,
      watch: flags.watch,
      functionEnvironment: overrides,
      // Through the functions' own writer, so that their lines and these never interleave.
      output,
      systemLogLevel,
      accessLog: (line) => output('stdout', line),
      onReload: (file) => output('stdout', JSON.stringify({ message: 'Source changed; handlers reload on next request', file })),
      onIndexRepair: (message) => output('stdout', JSON.stringify({ message })),
      // What API Gateway answers with a bare 500, said where the developer is looking.
      onFunctionError: ({ message, ...where }) => output('stderr', JSON.stringify({ level: 'ERROR', message, ...where })),
    });

    io.stdout(
      [
        '',
        `  Animal store API  ${api.baseUrl}`,
        `  API key           ${api.apiKey}${env.DEV_API_KEY ? '  (from DEV_API_KEY)' : ''}`,
        `  API reference     ${api.docsUrl}  (OpenAPI document: ${api.docsUrl.replace(/\/docs$/, '/openapi.json')})`,
        `  Storage           ${storage(dynamoDbEndpoint, dataDir)}`,
        `  Local DynamoDB    ${api.dynamoDbEndpoint}`,
        envVarsFile !== undefined ? `  Overrides         ${envVarsFile} (per-function environment)` : '',
        allowOrigins.length > 0 ? `  CORS origins      ${allowOrigins.join(', ')}  (CORS_ALLOW_ORIGINS)` : '',
        flags.watch ? '  Watching          functions/ and shared/ (functions reload on change)' : '',
        '',
        `  curl -H "Authorization: Bearer ${api.apiKey}" ${api.baseUrl}/pets`,
        '',
        '',
      ].join('\n'),
    );
    return api;
  } catch (error) {
    // startLocalApi names each variable a function would refuse on a line of its own.
    return refuseToStart(messageOf(error).split('\n'));
  }
}

/** npm start in this process: its arguments, settings and streams; exit status 1 when it refuses, and it stops on SIGINT or SIGTERM. */
export async function serveFromProcess(): Promise<void> {
  const api = await startServer(process.argv.slice(2), {
    env: process.env,
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stdoutIsTTY: process.stdout.isTTY === true,
  });
  if (api === undefined) process.exit(1);
  const stop = () => void api.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await serveFromProcess();

function storage(endpoint: string | undefined, dataDir: string | undefined): string {
  if (endpoint !== undefined) return `the DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)`;
  return dataDir ? `on disk in ${dataDir}` : 'in memory (set DATA_DIR to keep data between runs)';
}
