import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../project-root';
import { findCycles, findViolations, readImportGraph, type LayerRule } from '../helpers/import-graph';

/**
 * The layout is the architecture (README, Project layout): each folder's rule, read from the imports
 * themselves, type-only and dynamic ones included.
 */
const LAYERS: readonly LayerRule[] = [
  { folder: 'src/handlers', mayImport: ['src/http', 'src/dynamodb', 'src/domain', 'src/runtime', 'src/facts'] },
  { folder: 'src/checks', mayImport: ['src/http', 'src/domain', 'src/runtime', 'src/facts'] },
  { folder: 'src/http', mayImport: ['src/domain', 'src/runtime', 'src/facts'] },
  { folder: 'src/dynamodb', mayImport: ['src/domain', 'src/runtime', 'src/facts'] },
  { folder: 'src/domain', mayImport: ['src/runtime', 'src/facts'] },
  { folder: 'src/runtime', mayImport: ['src/facts'] },
  { folder: 'src/facts', mayImport: [] },
  { folder: 'contract', mayImport: ['src'] },
  { folder: 'infra', mayImport: ['src', 'project-root.ts'] },
  { folder: 'local', mayImport: ['src', 'contract', 'project-root.ts'] },
  { folder: 'tools', mayImport: ['src', 'contract', 'infra', 'local', 'project-root.ts'] },
];

const graph = readImportGraph(PROJECT_ROOT);

describe('the import graph', () => {
  it('reads the repository: the handlers import the HTTP adapter, the stores and the domain', () => {
    const handlerImports = graph.get('src/handlers/create-pet.ts') ?? [];
    expect(handlerImports.some((file) => file.startsWith('src/http/'))).toBe(true);
    expect(handlerImports.some((file) => file.startsWith('src/dynamodb/'))).toBe(true);
    expect(handlerImports.some((file) => file.startsWith('src/domain/'))).toBe(true);
  });

  it('has no cycle, type-only imports included', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('has every arrow pointing down the layers: handlers → http and dynamodb → domain → runtime → facts', () => {
    expect(findViolations(graph, LAYERS)).toEqual([]);
  });

  it('has nothing outside test/ importing from test/', () => {
    const fromOutside = [...graph].flatMap(([file, targets]) =>
      file.startsWith('test/') ? [] : targets.filter((target) => target.startsWith('test/')).map((target) => `${file} → ${target}`),
    );
    expect(fromOutside).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it('find a cycle through a type-only import', () => {
    const withCycle = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
    ]);
    expect(findCycles(withCycle)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });

  it('find an arrow running back up, and accept one pointing down', () => {
    const upAndDown = new Map([
      ['src/domain/pets/pet-operations.ts', ['src/http/errors.ts', 'src/facts/routes.ts']],
      ['src/facts/routes.ts', []],
    ]);
    expect(findViolations(upAndDown, LAYERS)).toEqual(['src/domain/pets/pet-operations.ts → src/http/errors.ts']);
  });

  it('read a type-only import as an edge', () => {
    // The idempotent operation imports nothing but the deadline's InvocationClock type from the runtime.
    expect(graph.get('src/domain/idempotency/idempotent-operation.ts')).toContain('src/runtime/deadline.ts');
  });
});
