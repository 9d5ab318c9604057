import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PREFLIGHT_MAX_AGE_SECONDS } from '../shared/http/cors-policy';
import { ENV } from '../shared/facts/environment';
import { createConsoleLog, logFormatFrom, showMetricsFrom, systemLogLevelFrom } from './console-log';
import { parseAllowedOrigins } from './cors';
import { DEFAULT_DYNAMODB_PORT, DYNALITE_HOST } from './dynamodb-local';
import { shellSettingRefusals } from './config-check';
import { EnvVarsFileError, readEnvVarsFile } from './env-vars';
import { startLocalApi } from './local-api';
import { DEFAULT_PORT, listenRefusal } from './listen';
import { endpointFrom, hostFrom, portFrom } from './addresses';
import { messageOf } from '../shared/runtime/error-message';

/**
 * `npm start`: serves the API on this machine. Configuration comes from the environment
 * (docs/local-development.md, "Configuration"); `--watch` (npm run dev) reloads handlers when their source changes.
 */
const { values: flags } = (() => {
  try {
    return parseArgs({ options: { watch: { type: 'boolean', default: false }, 'env-vars': { type: 'string' } } });
  } catch (error) {
    // An unknown option is named like every other refusal, not thrown as a stack trace.
    return refuseToStart([messageOf(error)]);
  }
})();
const env = process.env;

/** Every bad setting, one line each: a developer fixes them all in one go, not one per start. */
const problems: string[] = [];

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

function refuseToStart(lines: readonly string[]): never {
  for (const line of lines) process.stderr.write(`Could not start the local API: ${line}\n`);
  process.exit(1);
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
    dynamoDbPort === undefined || dynamoDbEndpoint !== undefined ? undefined : listenRefusal(dynamoDbPort, DYNALITE_HOST, 'DYNAMODB_PORT'),
  ]);
  problems.push(...taken.filter((refusal) => refusal !== undefined));
  // SAM's --env-vars: per-function overrides, checked with the rest before anything starts.
  const envVarsFile = flags['env-vars'] || env.ENV_VARS || undefined;
  const overrides = envVarsFile === undefined ? undefined : await readEnvVarsFile(envVarsFile).catch(noteEnvVarsProblems);
  const logFormat = setting(() => logFormatFrom('LOG_FORMAT', env.LOG_FORMAT, process.stdout.isTTY === true));
  const showMetrics = setting(() => showMetricsFrom('LOG_METRICS', env.LOG_METRICS));
  const systemLogLevel = setting(() => systemLogLevelFrom('SYSTEM_LOG_LEVEL', env.SYSTEM_LOG_LEVEL));
  problems.push(...shellSettingRefusals(env));
  if (problems.length > 0 || port === undefined || dynamoDbPort === undefined || logFormat === undefined) refuseToStart(problems);
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

  process.stdout.write(
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

  const stop = () => void api.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
} catch (error) {
  // startLocalApi names each variable a function would refuse on a line of its own.
  refuseToStart(messageOf(error).split('\n'));
}

function storage(endpoint: string | undefined, dataDir: string | undefined): string {
  if (endpoint !== undefined) return `the DynamoDB at ${endpoint} (DYNAMODB_ENDPOINT)`;
  return dataDir ? `on disk in ${dataDir}` : 'in memory (set DATA_DIR to keep data between runs)';
}
