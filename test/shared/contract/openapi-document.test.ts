import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../../shared/contract/openapi-document';
import { CLIENT_TYPES_PATH, OPENAPI_PATH, openApiServers, renderClientTypes, renderOpenApiDocument } from '../../../tools/openapi';
import { production, staging, type StageConfig } from '../../../infra/stages';
import { ERROR_CODES } from '../../../shared/facts/error-codes';
import { LIST_LIMIT, MAX_CURSOR_LENGTH, MAX_ID, NAME_MAX_LENGTH } from '../../../shared/domain/pets/pet-schemas';
import { BASE_PATH, findRoute, routes, type Route } from '../../../shared/facts/routes';
import { isExampleDomain, PLACEHOLDER_ACCOUNTS } from '../../../infra/placeholders';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { originOn } from '../../../local/addresses';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../../local/listen';
import { expectDocumentedResponse } from '../../helpers/contract';

const committed = readFileSync(OPENAPI_PATH, 'utf8');
const document = JSON.parse(committed) as Record<string, any>;
const operations = Object.values(document.paths as Record<string, Record<string, any>>).flatMap((path) => Object.values(path));
const operation = (id: string) => operations.find((candidate) => candidate.operationId === id);

describe('openapi.json', () => {
  it('is what npm run openapi generates from the current code (run it and commit the result if this fails)', () => {
    expect(committed).toBe(renderOpenApiDocument());
  });

  it('comes with the client types openapi-typescript generates from it', async () => {
    expect(readFileSync(CLIENT_TYPES_PATH, 'utf8')).toBe(await renderClientTypes(committed));
  });

  it('passes Redocly lint with the recommended rules, warnings counted as errors', () => {
    const result = redoclyLint('openapi.json');
    expect(result.stdout + result.stderr).not.toMatch(/warning|error/i);
    expect(result.status).toBe(0);
  });

  it("passes Spectral with OWASP's API security rules, every rule that does not apply turned off with its reason", () => {
    const result = spawnSync(
      `${PROJECT_ROOT}/node_modules/.bin/spectral`,
      ['lint', 'openapi.json', '--ruleset', '.spectral.yaml', '--fail-severity=hint', '--format=json', '--quiet'],
      { cwd: PROJECT_ROOT, encoding: 'utf8' },
    );
    const findings = JSON.parse(result.stdout || '[]') as Array<{ code: string; path: string[] }>;
    expect(findings.map((finding) => `${finding.code} at ${finding.path.join('/')}`)).toEqual([]);
    expect(result.status).toBe(0);
  });

  it("takes no id parameter but a pet's, the one id .spectral.yaml lets be a number (pet ids are random, not a sequence)", () => {
    // Spectral's no-numeric-ids rule reads parameters named as these are.
    const idParameters = Object.values(document.paths as Record<string, Record<string, any>>)
      .flatMap((path) => [path, ...Object.values(path)])
      .flatMap((holder) => (Array.isArray(holder.parameters) ? holder.parameters : []))
      .map((parameter: { name: string }) => parameter.name)
      .filter((name: string) => name === 'id' || /(_id|Id|-id)$/.test(name));
    expect([...new Set(idParameters)]).toEqual(['petId']);
  });

  it('is OpenAPI 3.1, every server under the major version', () => {
    expect(document.openapi).toBe('3.1.0');
    for (const server of document.servers) expect(new URL(server.url).pathname).toBe(BASE_PATH);
  });

  it('has one operation per route, each under the bearer scheme', () => {
    expect(operations.map((candidate) => candidate.operationId).sort()).toEqual(routes.map((route) => route.operationId).sort());
    expect(document.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const candidate of operations) expect(candidate.security).toEqual([{ apiKey: [] }]);
  });

  it('marks getPet deprecated, with its sunset date and replacement, and documents the deprecation headers', () => {
    const getPet = operation('getPet');
    expect(getPet).toMatchObject({ deprecated: true, 'x-sunset': '2030-12-05', 'x-replacement': 'GET /pets' });
    for (const response of Object.values(getPet.responses as Record<string, { headers: object; $ref?: string }>)) {
      // API Gateway's own answers (a $ref to a Gateway response) come from API Gateway, not from getPet.
      if (response.$ref?.startsWith('#/components/responses/Gateway')) continue;
      expect(Object.keys(response.headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']));
    }
  });

  it('carries every limit of the contract', () => {
    const limit = operation('listPets').parameters.find((parameter: { name: string }) => parameter.name === 'limit');
    expect(limit.schema).toMatchObject({ type: 'integer', minimum: LIST_LIMIT.min, maximum: LIST_LIMIT.max, default: LIST_LIMIT.default });
    const { NewPet } = document.components.schemas;
    expect(NewPet.properties.name).toMatchObject({ minLength: 1, maxLength: NAME_MAX_LENGTH });
    expect(NewPet.properties.categoryId).toMatchObject({ type: 'integer', minimum: 1, maximum: MAX_ID, format: 'int64' });
    expect(NewPet.additionalProperties).toBe(false);
  });

  it('documents the next-page Link header and the cursor parameter of listPets', () => {
    const listPets = operation('listPets');
    expect(listPets.responses['200'].headers.Link).toBeDefined();
    expect(listPets.parameters.map((parameter: { name: string }) => parameter.name)).toContain('cursor');
  });

  it('documents every error response with the Error schema and the codes it can carry', () => {
    expect(document.components.schemas.Error.properties.code.enum).toEqual(Object.keys(ERROR_CODES));
    for (const candidate of operations) {
      const errors = Object.entries(candidate.responses as Record<string, any>).filter(([status]) => Number(status) >= 400);
      expect(errors.map(([status]) => status)).toEqual(expect.arrayContaining(['401', '500', '503']));
      for (const [status, response] of errors) {
        if (response.$ref) {
          // Only API Gateway answers it: its own body.
          expect(response.$ref).toBe(`#/components/responses/Gateway${status}`);
          continue;
        }
        const media = response.content['application/json'];
        const ours = { $ref: '#/components/schemas/Error' };
        expect([ours, { oneOf: [ours, { $ref: '#/components/schemas/GatewayError' }] }]).toContainEqual(media.schema);
        for (const example of Object.values(media.examples as Record<string, { value: { code: string; status: number } }>)) {
          expect(ERROR_CODES[example.value.code as keyof typeof ERROR_CODES]).toBe(Number(status));
        }
      }
    }
  });

  it('documents the answers API Gateway gives itself, 429 above all, with their own body on every operation', () => {
    expect(document.components.schemas.GatewayError).toMatchObject({ required: ['message'], additionalProperties: false });
    for (const candidate of operations) {
      expect(candidate.responses['429']).toEqual({ $ref: '#/components/responses/Gateway429' });
      for (const status of ['500', '503']) {
        expect(candidate.responses[status].content['application/json'].schema.oneOf).toContainEqual({
          $ref: '#/components/schemas/GatewayError',
        });
      }
    }
  });

  it('references the named PetStatus schema from listPets, so generated clients get one status type', () => {
    const status = operation('listPets').parameters.find((parameter: { name: string }) => parameter.name === 'status');
    expect(status.schema).toEqual({ $ref: '#/components/schemas/PetStatus' });
  });

  it('bounds the list response and the cursor as the code does', () => {
    expect(document.components.schemas.Pets.maxItems).toBe(LIST_LIMIT.max);
    const cursor = operation('listPets').parameters.find((parameter: { name: string }) => parameter.name === 'cursor');
    expect(cursor.schema.maxLength).toBe(MAX_CURSOR_LENGTH);
  });

  it("serves first npm start on this machine, a URL with no variable to fill in, so a generated client's default base URL answers", () => {
    const [first] = document.servers;
    expect(first.description).toMatch(/^Local: /);
    expect(first.variables).toBeUndefined();
    expect(first.url).not.toContain('{');
    expect(new URL(first.url).port).not.toBe('');
  });

  it('names npm start at the address its banner prints and the README gives', () => {
    const [first] = document.servers;
    expect(first.url).toBe(`${originOn(DEFAULT_HOST, DEFAULT_PORT)}${BASE_PATH}`);
    expect(first.url).toBe('http://localhost:3000/v1');
    expect(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')).toContain(`BASE=${first.url}\n`);
  });

  it('names no server at an example host (but npm start at localhost) or with a variable left in its URL: every one answers as written', () => {
    const urls: string[] = document.servers.map((server: { url: string }) => server.url);
    expect(urls.filter((url) => url.includes('{'))).toEqual([]);
    const hosts = urls.map((url) => new URL(url).hostname).filter((host) => host !== 'localhost');
    expect(hosts.filter((host) => isExampleDomain(host))).toEqual([]);
  });

  it('gives every operation an example response, but a 204, which has no body to show', () => {
    for (const candidate of operations) {
      const [status, success] = Object.entries(candidate.responses as Record<string, any>).find(([code]) => Number(code) < 300)!;
      // A 204 answers no body, so has no example to give.
      if (status === '204') expect(success.content).toBeUndefined();
      else expect(success.content['application/json'].example).toBeDefined();
    }
  });
});

describe('the servers of the document', () => {
  // An operator's filled-in stage: an account and a domain of their own, not infra/placeholders.ts's.
  const filledIn = (stage: StageConfig, domainName: string): StageConfig => ({
    ...stage,
    account: '123456789012',
    domain: { domainName, certificateArn: `arn:aws:acm:${stage.region}:123456789012:certificate/abc` },
  });

  it('list a stage with a real account and domain at its custom domain, after npm start, with nothing to fill in', () => {
    const servers = openApiServers([staging, filledIn(production, 'api.animal-store.io')]);
    expect(servers.map((server) => server.description.split(':')[0])).toEqual(['Local', 'Production']);
    expect(servers[1]).toEqual({
      url: `https://api.animal-store.io${BASE_PATH}`,
      description: expect.stringContaining(`the BaseUrl output of the ${production.stackName} stack`),
      'x-internal': false,
    });
  });

  it('leave out a stage whose domain is an example, whose account is a placeholder, or that has no custom domain', () => {
    const real = filledIn(production, 'api.animal-store.io');
    for (const stage of [
      { ...real, domain: { ...real.domain!, domainName: 'api.animal-store.example' } },
      { ...real, account: PLACEHOLDER_ACCOUNTS[0]! },
      { ...real, domain: undefined },
    ]) {
      expect(openApiServers([stage]).map((server) => server.description.split(':')[0])).toEqual(['Local']);
    }
  });

  it('put the last promoted stage first among the stages, the only one not marked internal', () => {
    const servers = openApiServers([filledIn(staging, 'staging.animal-store.io'), filledIn(production, 'api.animal-store.io')]);
    expect(servers.map((server) => [server.description.split(':')[0], server['x-internal']])).toEqual([
      ['Local', true],
      ['Production', false],
      ['Staging', true],
    ]);
  });
});

/** Redocly's lint of a document, with the repository's configuration (redocly.yaml). */
function redoclyLint(file: string) {
  return spawnSync(`${PROJECT_ROOT}/node_modules/.bin/redocly`, ['lint', file, '--format=stylish'], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
}

describe('the document once the deprecated operation is removed at its sunset (its route deleted from the table)', () => {
  const table: readonly Route[] = routes.filter((route: Route) => route.deprecation === undefined);
  const built = buildOpenApiDocument(openApiServers(), table);
  const text = JSON.stringify(built, null, 2);
  const work = mkdtempSync(join(tmpdir(), 'animal-store-openapi-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('describes the remaining operations, and no other', () => {
    const described = Object.values(built.paths as Record<string, Record<string, { operationId: string }>>).flatMap((path) =>
      Object.values(path),
    );
    expect(described.map((candidate) => candidate.operationId).sort()).toEqual(table.map((route) => route.operationId).sort());
  });

  it('says nothing of deprecation: no deprecated operation, no Deprecation, Sunset or successor header, no removal date', () => {
    expect(text).not.toMatch(/deprecat|sunset|successor|removed on/i);
  });

  it('passes Redocly lint as the committed document does: no reference left dangling, no component left unused', () => {
    const file = join(work, 'openapi.json');
    writeFileSync(file, text);
    const result = redoclyLint(file);
    expect(result.stdout + result.stderr).not.toMatch(/warning|error/i);
    expect(result.status).toBe(0);
  });

  it('still gives generated clients their types', async () => {
    expect(await renderClientTypes(text)).toContain('operations');
  });
});

describe('the document with more than one deprecated operation', () => {
  // Every route deprecated, each with its own sunset: the shared header components must admit them all.
  const sunsets = routes.map((_, index) => new Date(Date.UTC(2031, 0, index + 1)));
  const table: readonly Route[] = routes.map((route: Route, index) => ({
    ...route,
    deprecation: { since: new Date('2026-01-01T00:00:00Z'), sunset: sunsets[index]!, successorPath: '/pets' },
  }));
  const built = buildOpenApiDocument(openApiServers(), table) as Record<string, any>;

  it("admits each one's Sunset date in the shared header, and names each in the description with its removal date", () => {
    expect(built.components.headers.Sunset.schema.enum).toEqual(sunsets.map((sunset) => sunset.toUTCString()));
    for (const [index, route] of table.entries()) {
      expect(built.info.description).toContain(
        `\`${route.method} /v1${route.path}\` is deprecated\nand will be removed on ${sunsets[index]!.toUTCString().slice(5, 16)}.`,
      );
    }
  });
});

describe('the document of an operation that succeeds with 204', () => {
  // A delete, as a new operation would declare it; it borrows getPet's name and schemas, the operation ids being closed.
  const { deprecation: _, ...getPet } = findRoute('getPet');
  const remove: Route = { ...getPet, method: 'DELETE', successStatus: 204 };
  const table: readonly Route[] = [...routes.filter((route: Route) => route.operationId !== 'getPet'), remove];
  const built = buildOpenApiDocument(openApiServers(), table) as Record<string, any>;
  const responses = built.paths[remove.path].delete.responses as Record<string, Record<string, unknown>>;
  const work = mkdtempSync(join(tmpdir(), 'animal-store-openapi-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('documents its success as 204 with no body, and no 200', () => {
    expect(responses['204']).toEqual({ description: 'Done. The response has no body.' });
    expect(responses).not.toHaveProperty('200');
  });

  it('documents its errors with the Error body, as every operation does', () => {
    expect(responses['404']).toHaveProperty(['content', 'application/json']);
  });

  it('passes Redocly lint as the committed document does', () => {
    const file = join(work, 'openapi.json');
    writeFileSync(file, JSON.stringify(built, null, 2));
    const result = redoclyLint(file);
    expect(result.stdout + result.stderr).not.toMatch(/warning|error/i);
    expect(result.status).toBe(0);
  });
});

describe('the contract check run on every integration response', () => {
  // createPet's 201: an operation every version of the route table keeps, with a required header.
  const response = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    url: 'http://localhost:3000/v1/pets',
    status,
    headers: new Headers({ 'content-type': 'application/json', location: 'http://localhost:3000/v1/pets/1', ...headers }),
    body: JSON.stringify(body),
  });

  it('accepts a documented response', () => {
    expect(() => expectDocumentedResponse(response(201, { id: 1, name: 'Rex', categoryId: 1 }))).not.toThrow();
  });

  it('rejects a body that drifts from the schema', () => {
    expect(() => expectDocumentedResponse(response(201, { id: 1, name: 'Rex', categoryId: '1' }))).toThrow(/body/);
  });

  it('rejects a status the operation does not document', () => {
    expect(() => expectDocumentedResponse(response(404, { code: 'not_found', message: 'x', status: 404 }))).toThrow(/not documented/);
  });

  it('rejects a response missing a required header', () => {
    const withoutLocation = response(201, { id: 1, name: 'Rex', categoryId: 1 });
    withoutLocation.headers.delete('location');
    expect(() => expectDocumentedResponse(withoutLocation)).toThrow(/Location/);
  });
});
