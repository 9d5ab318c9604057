import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RequestParts } from '../shared/checks/check-requests';
import { fileNameOf } from '../shared/facts/function-names';
import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { routeTarget, type HttpMethod } from '../shared/facts/routes';
import type { AnyOperation, OperationRoute } from '../shared/operations/operation';

// From each shared/operations/<name>-operation.ts, the files that list every operation: `npm run generate`
// writes them (tools/generate-operations.ts), and so does `npm run dev` when an operation's file changes. No
// function bundles an operation's file, so what the functions need of it is written out: the registry, the
// route table with each function's variables (every function bundles it), the deployment's checks (the
// pre-traffic hook and the deployment traffic bundle them), and each sample event (local/events/).
// test/local/operation-files.test.ts fails when any is stale.

/** The folder of the operations' files, relative to a source root. */
export const OPERATIONS_DIR = 'shared/operations';

/** Whether a path, relative to the source root, is an operation's file. */
export function isOperationFile(path: string): boolean {
  return /^shared\/operations\/[^/]+-operation\.ts$/.test(path);
}

const OPERATION_FILE = /^(.+)-operation\.ts$/;
/** How many times the operations were read: each read imports them afresh, under a URL of its own. */
let reads = 0;
// Biome leaves these alone (biome.jsonc): they are written as JSON is, and only ever by this module.
const HEADER = '// Written by `npm run generate` from shared/operations/*-operation.ts: edit those, never this file.';

/** The order of the route table, the document and every list of operations: by path, then by method as REST lists them. */
const METHOD_ORDER: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

interface Found {
  readonly file: string;
  readonly name: string;
  readonly operation: AnyOperation;
}

/**
 * Every operation file's operation, in route-table order; a file must export one operation, named as its file.
 * Each is imported as it is on disk now: `npm run dev` reads them again after an edit.
 */
async function findOperations(sourceRoot: string): Promise<Found[]> {
  const found: Found[] = [];
  const folder = join(sourceRoot, OPERATIONS_DIR);
  for (const file of readdirSync(folder).sort()) {
    const base = OPERATION_FILE.exec(file)?.[1];
    if (base === undefined) continue;
    const path = join(folder, file);
    const exports = (await import(`${pathToFileURL(path).href}?read=${++reads}`)) as Record<string, AnyOperation>;
    const names = Object.keys(exports);
    const [name] = names;
    const operation = name === undefined ? undefined : exports[name];
    if (names.length !== 1 || operation === undefined || fileNameOf(name!) !== base || operation.route.operationId !== name) {
      throw new Error(
        `shared/operations/${file} must export one operation, defineOperation({ route: { operationId: '<name>' } }) named as its file.`,
      );
    }
    found.push({ file, name: name!, operation });
  }
  return found.sort(({ operation: { route: a } }, { operation: { route: b } }) =>
    a.path === b.path ? METHOD_ORDER.indexOf(a.method) - METHOD_ORDER.indexOf(b.method) : a.path < b.path ? -1 : 1,
  );
}

/** A value as TypeScript source, laid out as JSON is: a Date as the Date it is. */
function source(value: unknown): string {
  const dates: string[] = [];
  const json = JSON.stringify(
    value,
    function (this: Record<string, unknown>, key, entry) {
      const original = this[key];
      if (!(original instanceof Date)) return entry;
      dates.push(original.toISOString());
      return `\u0000date${dates.length - 1}`;
    },
    2,
  );
  return json.replace(/"\\u0000date(\d+)"/g, (_, index: string) => `new Date(${JSON.stringify(dates[Number(index)])})`);
}

function registry(found: readonly Found[]): string {
  return [
    HEADER,
    ...[...found].sort((a, b) => (a.file < b.file ? -1 : 1)).map(({ file, name }) => `import { ${name} } from './${file.slice(0, -3)}';`),
    '',
    '/** Every operation, by its name, in the route table\'s order: what each table of "every operation" derives from. */',
    `export const OPERATIONS = { ${found.map(({ name }) => name).join(', ')} } as const;`,
    '',
  ].join('\n');
}

function routeTable(found: readonly Found[]): string {
  const routeOf = ({ operation }: Found): OperationRoute => operation.route;
  return [
    HEADER,
    '',
    '/** Every operation of the API: each is also the name of the function that serves it (shared/facts/function-names.ts). */',
    `export const OPERATION_IDS = ${source(found.map(({ name }) => name))} as const;`,
    '',
    "/** Each operation's route, as shared/facts/routes.ts types it (Route). */",
    `export const OPERATION_ROUTES = ${source(found.map(routeOf))} as const;`,
    '',
    "/** The variables each operation's function reads besides the log level and the metrics', by their role (shared/runtime/function-config.ts). */",
    `export const OPERATION_VARIABLES = ${source(Object.fromEntries(found.map(({ name, operation }) => [name, operation.variables])))} as const;`,
    '',
  ].join('\n');
}

function checkTable(found: readonly Found[]): string {
  return [
    HEADER,
    "import type { OperationChecks } from './check-requests';",
    "import type { OperationId } from '../facts/routes';",
    '',
    '/** What each operation states of the requests a deployment sends it: its pre-traffic check and its traffic. */',
    `export const OPERATION_CHECKS = ${source(Object.fromEntries(found.map(({ name, operation }) => [name, operation.deployment])))} as const satisfies Readonly<Record<OperationId, OperationChecks>>;`,
    '',
  ].join('\n');
}

/**
 * `npm run invoke`'s sample event of an operation (local/events/): its bench request, the common case, as API
 * Gateway delivers it to the function behind the authorizer, with the headers a client sends; pet 1 in each path parameter.
 */
function sampleEvent({ route, bench }: AnyOperation): string {
  const request: RequestParts = bench.request;
  const { routeKey, rawPath, pathParameters } = routeTarget(route, '1');
  const query = request.query ?? {};
  const host = 'abc123.execute-api.eu-west-1.amazonaws.com';
  const event = {
    version: '2.0',
    routeKey,
    rawPath,
    rawQueryString: new URLSearchParams(query).toString(),
    headers: {
      accept: 'application/json',
      host,
      'user-agent': 'curl/8.5.0',
      'x-amzn-trace-id': 'Root=1-6740a0c0-0123456789abcdef01234567',
      'x-forwarded-for': '192.0.2.10',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
      ...request.headers,
      ...(request.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(request.body)) }),
    },
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: '123456789012',
      apiId: 'abc123',
      domainName: host,
      domainPrefix: 'abc123',
      http: { method: route.method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '192.0.2.10', userAgent: 'curl/8.5.0' },
      requestId: 'JKJaXmPLvHcESHA=',
      routeKey,
      stage: '$default',
      time: '22/Nov/2026:12:00:00 +0000',
      timeEpoch: 1795348800000,
      authorizer: { lambda: { outcome: 'allowed', keyId: 'key_0123456789abcdef' } },
    },
    ...(pathParameters ? { pathParameters } : {}),
    ...(request.body === undefined ? {} : { body: request.body }),
    isBase64Encoded: false,
  };
  return `${JSON.stringify(event, null, 2)}\n`;
}

/** Every file written from the operations of the source root, by its path there, with its content. */
export async function renderOperationFiles(sourceRoot = PROJECT_ROOT): Promise<Map<string, string>> {
  const found = await findOperations(sourceRoot);
  return new Map([
    ['shared/operations/operations.ts', registry(found)],
    ['shared/facts/operation-routes.ts', routeTable(found)],
    ['shared/checks/operation-checks.ts', checkTable(found)],
    ...found.map(({ name, operation }): [string, string] => [`local/events/${fileNameOf(name)}.json`, sampleEvent(operation)]),
  ]);
}

/** Writes the files of renderOperationFiles that differ from what is on disk, and says which it wrote. */
export async function writeOperationFiles(sourceRoot = PROJECT_ROOT): Promise<string[]> {
  const written: string[] = [];
  for (const [path, text] of await renderOperationFiles(sourceRoot)) {
    const absolute = join(sourceRoot, path);
    let current: string | undefined;
    try {
      current = readFileSync(absolute, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === text) continue;
    await writeFile(absolute, text);
    written.push(path);
  }
  return written;
}
