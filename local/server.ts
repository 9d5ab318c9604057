import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_DYNAMODB_PORT } from './dynamodb-local';
import { startLocalApi } from './local-api';

/**
 * `npm start`: serves the API on this machine. Configuration comes from the environment
 * (documented in the README); `--watch` (npm run dev) reloads handlers when their source changes.
 */
const { values: flags } = parseArgs({ options: { watch: { type: 'boolean', default: false } } });
const env = process.env;

function portFrom(name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`${name} must be a port number, got "${value}"`);
  return port;
}

try {
  const dataDir = env.DATA_DIR ? resolve(env.DATA_DIR) : undefined;
  const api = await startLocalApi({
    port: portFrom('PORT', 3000),
    host: env.HOST || '127.0.0.1',
    dynamoDbPort: portFrom('DYNAMODB_PORT', DEFAULT_DYNAMODB_PORT),
    dataDir,
    devApiKey: env.DEV_API_KEY || undefined,
    cursorSecret: env.CURSOR_SECRET || undefined,
    watch: flags.watch,
    accessLog: (line) => process.stdout.write(`${line}\n`),
    onReload: (file) => process.stdout.write(`${JSON.stringify({ message: 'Source changed; handlers reload on next request', file })}\n`),
  });

  process.stdout.write(
    [
      '',
      `  Animal store API  ${api.baseUrl}`,
      `  API key           ${api.apiKey}${env.DEV_API_KEY ? '  (from DEV_API_KEY)' : ''}`,
      `  API reference     ${api.docsUrl}  (OpenAPI document: ${api.docsUrl.replace(/\/docs$/, '/openapi.json')})`,
      `  Storage           ${dataDir ? `on disk in ${dataDir}` : 'in memory (set DATA_DIR to keep data between runs)'}`,
      `  Local DynamoDB    ${api.dynamoDbEndpoint}`,
      flags.watch ? '  Watching          functions/ and shared/ (handlers reload on change)' : '',
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
  process.stderr.write(`Could not start the local API: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
