import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { matchRoute } from '../../shared/facts/routes';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

type JsonObject = Record<string, any>;

/** The committed document, the one clients read: responses are checked against it, not the builder. */
const document = JSON.parse(readFileSync(`${PROJECT_ROOT}/openapi.json`, 'utf8')) as JsonObject;

const SCHEMAS_ID = 'https://animal-store.invalid/openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addFormat('int64', true);
// Component references point into the document; give Ajv the components under an id it can resolve.
const rewriteRefs = (value: unknown) =>
  JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${SCHEMAS_ID}#/$defs/`)) as JsonObject;
ajv.addSchema({ $id: SCHEMAS_ID, $defs: rewriteRefs(document.components.schemas) });

const compiled = new Map<string, ValidateFunction>();
function validator(key: string, schema: unknown): ValidateFunction {
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(rewriteRefs(schema));
    compiled.set(key, validate);
  }
  return validate;
}

function resolve(value: JsonObject): JsonObject {
  if (typeof value.$ref !== 'string') return value;
  const path = (value.$ref as string).replace(/^#\//, '').split('/');
  return path.reduce<JsonObject>((node, segment) => node[segment.replaceAll('~1', '/').replaceAll('~0', '~')], document);
}

export interface ObservedResponse {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

/**
 * Asserts that a response the local API gave is one the OpenAPI document describes: a documented
 * status for the operation, every required header present and valid, and a body matching the
 * schema. Requests no operation serves must still answer the Error schema.
 */
export function expectDocumentedResponse(observed: ObservedResponse): void {
  const { pathname } = new URL(observed.url);
  const label = `${observed.method} ${pathname} → ${observed.status}`;
  const match = matchRoute(observed.method, pathname);

  let documented: JsonObject;
  if (match) {
    const operation = document.paths[match.route.path]?.[observed.method.toLowerCase()] as JsonObject | undefined;
    expect(operation, `${label}: operation missing from openapi.json`).toBeDefined();
    const response = operation!.responses[String(observed.status)] as JsonObject | undefined;
    expect(response, `${label}: status not documented for ${operation!.operationId}`).toBeDefined();
    documented = resolve(response!);
  } else {
    // The $default route: no operation, but our Error body all the same.
    expect([401, 404, 405, 500, 503], `${label}: unexpected status for an unmatched route`).toContain(observed.status);
    documented = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
  }

  for (const [name, header] of Object.entries((documented.headers ?? {}) as Record<string, JsonObject>)) {
    const definition = resolve(header);
    const value = observed.headers.get(name);
    if (value === null) {
      expect(definition.required, `${label}: required header ${name} is missing`).not.toBe(true);
      continue;
    }
    const validate = validator(`header ${name} ${JSON.stringify(definition.schema)}`, definition.schema);
    expect(validate(value), `${label}: header ${name}: ${value}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  }

  const content = documented.content?.['application/json'] as JsonObject | undefined;
  if (content === undefined) return;
  expect(observed.headers.get('content-type'), `${label}: content type`).toMatch(/^application\/json\b/);
  const body = JSON.parse(observed.body) as unknown;
  const validate = validator(`body ${JSON.stringify(content.schema)}`, content.schema);
  expect(validate(body), `${label}: body ${observed.body}: ${ajv.errorsText(validate.errors)}`).toBe(true);
  if (observed.status >= 400) expect((body as { status: number }).status, `${label}: status in the body`).toBe(observed.status);
}

/** fetch(), then the contract check; the response is returned unread. */
export async function fetchDocumented(url: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetch(url, init);
  const copy = response.clone();
  expectDocumentedResponse({
    method: (init.method ?? 'GET').toUpperCase(),
    url,
    status: response.status,
    headers: response.headers,
    body: await copy.text(),
  });
  return response;
}
