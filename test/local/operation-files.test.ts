import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_CATALOG } from '../../shared/catalog/function-catalog';
import { OPERATION_CHECKS } from '../../shared/checks/operation-checks';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { fileNameOf } from '../../shared/facts/function-names';
import { OPERATION_IDS, routes } from '../../shared/facts/routes';
import { OPERATIONS } from '../../shared/operations/operations';
import { isOperationFile, renderOperationFiles } from '../../local/operation-files';

describe('the files written from the operations', () => {
  it('are what `npm run generate` writes from shared/operations/ now', async () => {
    for (const [path, text] of await renderOperationFiles()) {
      expect(readFileSync(join(PROJECT_ROOT, path), 'utf8'), `${path} is stale: run npm run generate`).toBe(text);
    }
  }, 60_000);

  it('give each operation its route, variables and checks as its own file states them', () => {
    expect(Object.keys(OPERATIONS)).toEqual(OPERATION_IDS);
    for (const operationId of OPERATION_IDS) {
      const operation = OPERATIONS[operationId];
      expect(routes.find((route) => route.operationId === operationId)).toEqual(operation.route);
      expect(OPERATION_CHECKS[operationId]).toEqual(operation.deployment);
      expect(FUNCTION_CATALOG[operationId].tables).toBe(operation.tables);
    }
  });

  it("are written again by npm run dev when an operation's file changes, and only then", () => {
    expect(
      Object.keys(OPERATIONS)
        .map((name) => `shared/operations/${fileNameOf(name)}-operation.ts`)
        .every(isOperationFile),
    ).toBe(true);
    expect(['shared/operations/operations.ts', 'shared/operations/operation.ts', 'shared/facts/routes.ts'].some(isOperationFile)).toBe(
      false,
    );
  });

  it('list the routes by path, then by method, so a new file does not reorder the document', () => {
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const order = routes.map((route) => `${route.path} ${methods.indexOf(route.method)}`);
    expect(order).toEqual([...order].sort());
  });
});
