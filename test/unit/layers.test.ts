import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../project-root';
import { OPERATION_IDS, routes } from '../../shared/routes';

/** Every TypeScript file below a folder of the repository, with the repository paths it imports. */
function importsBelow(folder: string): Array<{ file: string; imports: string[] }> {
  const root = join(PROJECT_ROOT, folder);
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => {
      const file = join(root, name);
      const specifiers = [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm)].map((match) => match[1]!);
      const imports = specifiers.filter((specifier) => specifier.startsWith('.')).map((specifier) => relative(PROJECT_ROOT, resolve(dirname(file), specifier)));
      return { file: relative(PROJECT_ROOT, file), imports };
    });
}

/** The imports of `folder` that reach into any of `forbidden`. */
function violations(folder: string, forbidden: readonly string[]): string[] {
  return importsBelow(folder).flatMap(({ file, imports }) =>
    imports.filter((target) => forbidden.some((prefix) => target === prefix || target.startsWith(`${prefix}/`))).map((target) => `${file} → ${target}`),
  );
}

describe('dependencies point one way: functions/ → shared/ (HTTP adapter → domain → store)', () => {
  it('keeps the domain free of HTTP: shared/pets/ and shared/idempotency/ import nothing from shared/http/', () => {
    expect(violations('shared/pets', ['shared/http'])).toEqual([]);
    expect(violations('shared/idempotency', ['shared/http'])).toEqual([]);
  });

  it('keeps shared/ free of what uses it: the functions, the OpenAPI builder, the infrastructure, the local runtime', () => {
    expect(violations('shared', ['functions', 'contract', 'infra', 'local', 'test', 'bench', 'scripts'])).toEqual([]);
  });

  it('sees the imports it checks: shared/http/ does import the domain', () => {
    expect(violations('shared/http', ['shared/pets']).length).toBeGreaterThan(0);
  });
});

describe('the route table', () => {
  it('has exactly one route for every OperationId, and no other', () => {
    expect(routes.map((route) => route.operationId).sort()).toEqual([...OPERATION_IDS].sort());
  });
});
