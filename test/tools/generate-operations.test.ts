import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FUNCTION_CATALOG } from '../../shared/catalog/function-catalog';
import { OPERATION_CHECKS } from '../../shared/checks/operation-checks';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { OPERATION_IDS, routes } from '../../shared/facts/routes';
import { OPERATIONS } from '../../shared/operations/operations';
import { renderOperationFiles } from '../../tools/generate-operations';

describe('the files written from the operations', () => {
  it('are what `npm run generate` writes from shared/operations/ now', async () => {
    for (const [path, text] of await renderOperationFiles()) {
      const file = relative(PROJECT_ROOT, path);
      expect(readFileSync(path, 'utf8'), `${file} is stale: run npm run generate`).toBe(text);
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

  it('list the routes by path, then by method, so a new file does not reorder the document', () => {
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
    const order = routes.map((route) => `${route.path} ${methods.indexOf(route.method)}`);
    expect(order).toEqual([...order].sort());
  });
});
