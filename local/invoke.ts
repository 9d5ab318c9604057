import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { authorizer, routeNotFoundHandler, routes } from '../src/facts/routes';
import { ENV } from '../src/facts/environment';
import {
  createLocalClient,
  DEFAULT_DYNAMODB_PORT,
  LOCAL_TABLES,
  prepareLocalStage,
  startDynalite,
  type LocalDynamoDb,
} from './dynamodb-local';
import { createFunctionRuntime } from './functions';

/**
 * `npm run invoke -- <function> <event.json>`: invokes one function with an event file, the way
 * `sam local invoke` does, and prints its result. It uses the DynamoDB of a running `npm start`
 * when there is one (so it sees and changes the same data), and an in-memory one otherwise.
 */
const usage = `Usage: npm run invoke -- <function> <event.json | ->

  <function>  an operation (${routes.map((route) => route.operationId).join(', ')}) or a handler file
              in src/handlers/ (${[...routes.map((route) => route.handler), authorizer.handler, routeNotFoundHandler].join(', ')})
  <event>     a JSON event file (see events/), or - to read it from standard input

Environment: DYNAMODB_PORT (default ${DEFAULT_DYNAMODB_PORT}) to find a running local API's DynamoDB,
DATA_DIR to use an on-disk store when none is running, CURSOR_SECRET for listPets cursors.`;

const [target, eventPath] = process.argv.slice(2);
if (!target || !eventPath || target === '--help') {
  process.stderr.write(`${usage}\n`);
  process.exit(target === '--help' ? 0 : 2);
}

const handlerNames = new Set([...routes.map((route) => route.handler), authorizer.handler, routeNotFoundHandler]);
const handler = routes.find((route) => route.operationId === target)?.handler ?? (handlerNames.has(target) ? target : undefined);
if (handler === undefined) {
  process.stderr.write(`Unknown function "${target}".\n\n${usage}\n`);
  process.exit(2);
}

let store: LocalDynamoDb | undefined;
try {
  const event = JSON.parse(eventPath === '-' ? await readStdin() : await readFile(resolve(eventPath), 'utf8')) as unknown;
  const port = Number(process.env.DYNAMODB_PORT || DEFAULT_DYNAMODB_PORT);
  const running = `http://127.0.0.1:${port}`;
  let endpoint = running;
  if (await isDynamoDbAt(running)) {
    process.stderr.write(`Using the running local DynamoDB at ${running}\n`);
  } else {
    store = await startDynalite({
      port: 0,
      dataDir: process.env.DATA_DIR ? resolve(process.env.DATA_DIR) : undefined,
      onIndexRepair: (message) => process.stderr.write(`${message}\n`),
    });
    endpoint = store.endpoint;
    process.stderr.write(`No local API running; using a ${process.env.DATA_DIR ? 'on-disk' : 'throwaway in-memory'} DynamoDB\n`);
  }
  const environment = await prepareLocalStage(endpoint, process.env[ENV.cursorSecret] || 'local-invoke-cursor-secret-not-for-production');

  const runtime = await createFunctionRuntime({ environment });
  const result = await runtime.invoke(handler, event);
  await runtime.close();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} catch (error) {
  process.stderr.write(`Invocation failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await store?.close();
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
