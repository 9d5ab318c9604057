import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type ServerResponse, STATUS_CODES } from 'node:http';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { hashApiKey, isUsableApiKey } from '../shared/domain/auth/api-keys';
import { DynamoApiKeyStore } from '../shared/dynamodb/dynamo-api-key-store';
import { issueApiKey, revokeKeysNamed } from '../shared/domain/auth/manage-api-keys';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import * as startRouteTable from '../shared/facts/routes';
import * as startCorsPolicy from '../shared/http/cors-policy';
import { SHARED_DIR } from '../shared/facts/project-layout';
import { createLocalClient, LOCAL_TABLES, prepareLocalStage, startDynalite, type LocalDynamoDb } from './dynamodb-local';
import { createFunctionRuntime, type FunctionFailure, type FunctionRuntime } from './functions';
import { functionConfigProblems, localFunctionEnvironment, refusalsByFunction } from './config-check';
import * as startFunctionConfig from '../shared/runtime/function-config';
import * as startOpenApi from '../shared/contract/openapi-document';
import { serveDocs } from './docs-site';
import type { CorsConfig } from '../shared/http/cors-policy';
import type { OutputDestination } from '../shared/runtime/output';
import type { SystemLogLevel } from './console-log';
import { createGateway } from './gateway';
import { DEFAULT_HOST, listen } from './listen';
import { originOn } from './addresses';
import { readRequestTarget, type RefusedTarget } from './request-target';
import { type ClientAllowance, DEFAULT_CLIENT_ALLOWANCE, takeInTurn, type TurnTaking } from './take-in-turn';
import type { ApiFunctionName } from '../shared/facts/function-names';

/** The name under which the local server registers its development key. */
export const DEV_KEY_NAME = 'local development';

export interface LocalApiOptions {
  /** HTTP port; 0 picks a free one. */
  readonly port: number;
  readonly host?: string;
  /** Port of the embedded DynamoDB (dynalite); 0 picks a free one. Unused with `dynamoDbEndpoint`. */
  readonly dynamoDbPort: number;
  /**
   * An existing DynamoDB-compatible endpoint to use instead of starting dynalite; the tables are
   * created there when missing. Tests put a fault-injecting proxy here.
   */
  readonly dynamoDbEndpoint?: string;
  /**
   * Keep data on disk in this directory, and the development key with it (in the clear, readable by
   * its owner only); in memory when omitted. Unused with `dynamoDbEndpoint`.
   */
  readonly dataDir?: string;
  /** Register this key instead of generating one (or reusing the one kept in `dataDir`). */
  readonly devApiKey?: string;
  /** Secret that signs pagination cursors; random per start when omitted. */
  readonly cursorSecret?: string;
  /** Reload handlers when their source changes. */
  readonly watch?: boolean;
  /** Browser origins allowed to call the API, with CORS emulated as API Gateway does it; none when omitted. */
  readonly cors?: CorsConfig;
  readonly accessLog?: (line: string) => void;
  /** Where the functions' output and each invocation's START and REPORT lines go; this process's one writer when omitted. */
  readonly output?: OutputDestination;
  /** Which of the runtime's own lines (START, REPORT) are written: SYSTEM_LOG_LEVEL's unless given. */
  readonly systemLogLevel?: SystemLogLevel;
  /** Variables laid over one function's environment, by its name (a log level, a fault a test injects). */
  readonly functionEnvironment?: (name: string) => Readonly<Record<string, string>> | undefined;
  readonly onReload?: (file: string) => void;
  /** Told what failed, and where, whenever a function does: its build, its load, its handler, its limits. API Gateway's answer is a bare 500. */
  readonly onFunctionError?: (failure: FunctionFailure) => void;
  /** Told, in one line, what start-up repaired in `dataDir`'s indexes after a crash; never called when nothing was. */
  readonly onIndexRepair?: (message: string) => void;
  /** How long a client has to send a request, not counting the time the server holds it; Node's defaults unless given. */
  readonly clientAllowance?: ClientAllowance;
}

export interface LocalApi {
  /** Base URL of the API, ending in the version segment: `http://localhost:3000/v1`. */
  readonly baseUrl: string;
  /** The interactive API reference (Swagger UI); the document itself is at /openapi.json. */
  readonly docsUrl: string;
  readonly port: number;
  readonly apiKey: string;
  readonly dynamoDbEndpoint: string;
  close(): Promise<void>;
}

/**
 * Starts the whole API on this machine: dynalite with the deployed tables' keys, the development
 * key registered the way the key CLI registers one, and the gateway in front of the real handlers.
 * Rejects, with one line per variable and its rule, a configuration the functions would refuse.
 */
export async function startLocalApi(options: LocalApiOptions): Promise<LocalApi> {
  const cursorSecret = options.cursorSecret ?? randomBytes(32).toString('base64url');
  // Refused here, before anything starts, one line per variable: every configuration a function
  // would refuse at its cold start, which would otherwise answer 500 to every request it serves.
  const problems = [
    ...(options.devApiKey !== undefined && !isUsableApiKey(options.devApiKey)
      ? ['DEV_API_KEY must be 16 to 512 characters of letters, digits and -._~+/ (a bearer token).']
      : []),
    ...functionConfigProblems((name) => localFunctionEnvironment(cursorSecret, options.functionEnvironment?.(name))),
  ];
  if (problems.length > 0) throw new Error(problems.join('\n'));
  const dynamoDb =
    options.dynamoDbEndpoint === undefined
      ? await startDynalite({ port: options.dynamoDbPort, dataDir: options.dataDir, onIndexRepair: options.onIndexRepair })
      : existingDynamoDb(options.dynamoDbEndpoint);
  try {
    const environment = await prepareLocalStage(dynamoDb.endpoint, cursorSecret);
    const client = createLocalClient(dynamoDb.endpoint);
    const keys = new DynamoApiKeyStore(documentClientOver(client), LOCAL_TABLES.apiKeys);
    const keyFile =
      options.dynamoDbEndpoint === undefined && options.dataDir !== undefined ? join(options.dataDir, DEV_KEY_FILE) : undefined;
    const apiKey = await registerDevKey(keys, options.devApiKey, keyFile).finally(() => client.destroy());

    let recheck: ConfigRecheck | undefined;
    const functions = await createFunctionRuntime({
      environment,
      environmentOf: options.functionEnvironment,
      watch: options.watch,
      onReload: (file) => {
        options.onReload?.(file);
        recheck?.schedule();
      },
      output: options.output,
      systemLogLevel: options.systemLogLevel,
      onFunctionError: options.onFunctionError,
    });
    if (options.watch) {
      recheck = recheckConfigOnChange(
        functions,
        (name) => localFunctionEnvironment(cursorSecret, options.functionEnvironment?.(name)),
        options.onFunctionError,
      );
    }
    const gateway = createGateway({
      functions,
      accessLog: options.accessLog,
      sources: async () => ({
        routeTable: await functions.sourceModule(ROUTE_TABLE_MODULE, startRouteTable),
        corsPolicy: await functions.sourceModule(CORS_POLICY_MODULE, startCorsPolicy),
      }),
      ...(options.cors ? { cors: options.cors } : {}),
    });
    const allowance = options.clientAllowance ?? DEFAULT_CLIENT_ALLOWANCE;
    const turns = takeInTurn((req, res) => {
      const target = readRequestTarget(req);
      if (typeof target === 'number') {
        refuseTarget(res, target);
        return;
      }
      serveDocs(req, res, target, () => functions.sourceModule(OPENAPI_MODULE, startOpenApi))
        .then((served) => served || gateway(req, res, target))
        // A docs page that cannot be served (an asset unreadable) fails alone: 500 while nothing has
        // been sent, else the connection goes; neither can throw, so nothing reaches the process.
        .catch(() => (res.headersSent ? res.destroy() : res.writeHead(500).end()));
    }, allowance);
    const server = createServer(
      {
        keepAliveTimeout: 5_000,
        headersTimeout: allowance.headersMs,
        requestTimeout: allowance.requestMs,
        // Node's own ratio between its defaults: the timeouts checked at half the headers allowance.
        connectionsCheckingInterval: Math.ceil(allowance.headersMs / 2),
      },
      turns.listener,
    );
    server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => refuseClient(turns, error, socket));
    const host = options.host ?? DEFAULT_HOST;
    const port = await listen(server, options.port, host, 'PORT', 'HOST');
    // Where the local tools call it (./addresses.ts).
    const origin = originOn(host, port);

    return {
      baseUrl: `${origin}${startRouteTable.BASE_PATH}`,
      docsUrl: `${origin}/docs`,
      port,
      apiKey,
      dynamoDbEndpoint: dynamoDb.endpoint,
      async close() {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        recheck?.cancel();
        await functions.close();
        await dynamoDb.close();
      },
    };
  } catch (error) {
    await dynamoDb.close();
    throw error;
  }
}

/** The modules, below the source root, the gateway routes and answers preflights by, as the functions and the stacks do. */
const ROUTE_TABLE_MODULE = join(SHARED_DIR, 'facts', 'routes.ts');
const CORS_POLICY_MODULE = join(SHARED_DIR, 'http', 'cors-policy.ts');
/** The configuration schemas the functions read, rechecked after each edit. */
const FUNCTION_CONFIG_MODULE = join(SHARED_DIR, 'runtime', 'function-config.ts');
/** The OpenAPI document's builder: it follows the route table's and the schemas' edits. */
const OPENAPI_MODULE = join(SHARED_DIR, 'contract', 'openapi-document.ts');

/** How long a recheck waits for the rest of an edit: one save can be several file events (a temporary file, a rename). */
const RECHECK_DELAY_MS = 100;

interface ConfigRecheck {
  schedule(): void;
  cancel(): void;
}

/**
 * Under `npm run dev`, the check start-up makes, made again after each edit: a schema edited to require a
 * variable the environment lacks is told at once, naming the function, not only at its next cold start.
 * Each refusal is told once, until it is fixed; a build failure is told by the runtime itself.
 */
function recheckConfigOnChange(
  functions: FunctionRuntime,
  environmentOf: (name: ApiFunctionName) => Readonly<Record<string, string | undefined>>,
  report: ((failure: FunctionFailure) => void) | undefined,
): ConfigRecheck {
  let timer: NodeJS.Timeout | undefined;
  let told = new Set<string>();
  const check = async () => {
    const { FUNCTION_CONFIG } = await functions.sourceModule(FUNCTION_CONFIG_MODULE, startFunctionConfig);
    const failures = [...refusalsByFunction(environmentOf, FUNCTION_CONFIG)].map(
      ([name, lines]): FunctionFailure => ({
        function: name,
        phase: 'config',
        message: `${name} will refuse its configuration at its next cold start: ${lines.join('; ')}`,
      }),
    );
    for (const failure of failures) if (!told.has(failure.message)) report?.(failure);
    told = new Set(failures.map((failure) => failure.message));
  };
  return {
    schedule() {
      clearTimeout(timer);
      timer = setTimeout(() => check().catch(() => undefined), RECHECK_DELAY_MS);
    },
    cancel: () => clearTimeout(timer),
  };
}

/** Node's own answers to requests its parser rejects, by error code; 400 for any other. */
const MALFORMED_REQUEST_STATUS: Readonly<Record<string, number>> = {
  HPE_HEADER_OVERFLOW: 431,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 413,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
};

/**
 * A request Node's parser rejects (garbage request line, invalid header characters, headers over
 * the size limit), one not sent in time, or a connection that fails ends that connection only, never
 * the server: Node's own status when the client can still hear it, sent after the answers to the
 * requests read before it (./take-in-turn.ts), then the socket is destroyed once that is sent (or
 * could not be). ECONNRESET means the client is gone: nothing to answer.
 */
function refuseClient(turns: TurnTaking, error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable || error.code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  turns.refuseInTurn(socket, { timedOut: error.code === 'ERR_HTTP_REQUEST_TIMEOUT', send: () => answerMalformedRequest(error, socket) });
}

function answerMalformedRequest(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = MALFORMED_REQUEST_STATUS[error.code ?? ''] ?? 400;
  // The body API Gateway gives its own answers, so a client parses every non-API answer one way.
  const body = JSON.stringify({ message: STATUS_CODES[status] });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

/**
 * A target or Host that cannot be served, refused before it can reach a Location, a Link or the
 * served document's server URL, with the body API Gateway gives its own answers.
 */
function refuseTarget(res: ServerResponse, status: RefusedTarget): void {
  res.on('error', () => undefined);
  const body = JSON.stringify({ message: STATUS_CODES[status] });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' }).end(body);
}

/** An endpoint someone else runs: nothing to stop when the API closes. */
function existingDynamoDb(endpoint: string): LocalDynamoDb {
  return { endpoint, close: async () => undefined };
}

/**
 * The file in DATA_DIR that keeps the development key: the key store holds only hashes, so without
 * it every restart would issue a new key for the same data, and scripts holding the old one would
 * get 401. dynalite's LevelDB ignores files it did not write.
 */
const DEV_KEY_FILE = 'dev-api-key';

/**
 * One development key at a time: earlier ones (kept by an on-disk store) are revoked, and the key
 * to serve is registered unless it already is. That key is DEV_API_KEY when set; otherwise the one
 * kept in `keyFile` while the store still accepts it; otherwise a new one, kept there.
 */
async function registerDevKey(store: DynamoApiKeyStore, configured: string | undefined, keyFile: string | undefined): Promise<string> {
  const wanted = configured ?? (keyFile === undefined ? undefined : await readKeptKey(keyFile));
  const existing = wanted === undefined ? undefined : await store.findByHash(hashApiKey(wanted));
  // A revoked DEV_API_KEY is the developer's mistake to hear about; a revoked kept key is replaced.
  if (configured !== undefined && existing?.revokedAt !== undefined) throw new Error('DEV_API_KEY has been revoked; choose another key.');
  const registered = existing?.revokedAt === undefined ? existing : undefined;
  await revokeKeysNamed(store, DEV_KEY_NAME, registered?.keyId);
  if (registered !== undefined && wanted !== undefined) return wanted;
  const { apiKey } = await issueApiKey(store, DEV_KEY_NAME, configured);
  if (configured === undefined && keyFile !== undefined) await writeFile(keyFile, `${apiKey}\n`, { mode: 0o600 });
  return apiKey;
}

async function readKeptKey(keyFile: string): Promise<string | undefined> {
  try {
    const key = (await readFile(keyFile, 'utf8')).trim();
    return isUsableApiKey(key) ? key : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
