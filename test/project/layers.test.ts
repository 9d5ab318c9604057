import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { findCycles, findViolations, readImportGraph, type LayerRule } from '../helpers/import-graph';

/**
 * The layout is the architecture (README, Project layout): each folder's rule, read from the imports
 * themselves, type-only and dynamic ones included.
 */
const BUNDLED = ['shared/checks', 'shared/http', 'shared/dynamodb', 'shared/domain', 'shared/runtime', 'shared/facts'];
/** What the functions that check a deployed stage may use: they reach the tables through the API and the functions they check. */
const CHECKING = ['shared/checks', 'shared/client', 'shared/http', 'shared/domain', 'shared/runtime', 'shared/facts'];
const LAYERS: readonly LayerRule[] = [
  { folder: 'functions', mayImport: ['shared/http', 'shared/dynamodb', 'shared/domain', 'shared/runtime', 'shared/facts'] },
  // A function's own room (functions/<entry>/) holds what only it uses: its entry and the room import each other and the layers below.
  // The hook issues and revokes its check keys through the keys table's store, and its time budget
  // follows from that store's client.
  { folder: 'functions/pre-traffic-hook.ts', mayImport: ['functions/pre-traffic-hook', ...CHECKING, 'shared/dynamodb'] },
  { folder: 'functions/pre-traffic-hook', mayImport: [...CHECKING, 'shared/dynamodb/dynamodb-client.ts'] },
  { folder: 'functions/deployment-traffic.ts', mayImport: ['functions/deployment-traffic', ...CHECKING] },
  { folder: 'functions/deployment-traffic', mayImport: CHECKING },
  { folder: 'functions/synthetic-probe.ts', mayImport: ['functions/synthetic-probe', ...CHECKING] },
  { folder: 'functions/synthetic-probe', mayImport: CHECKING },
  { folder: 'shared/checks', mayImport: ['shared/client', 'shared/http', 'shared/domain', 'shared/runtime', 'shared/facts'] },
  // A package of its own (npm pack in its folder): it imports nothing of the project, so it installs alone.
  { folder: 'shared/client', mayImport: [] },
  { folder: 'shared/http', mayImport: ['shared/domain', 'shared/runtime', 'shared/facts'] },
  { folder: 'shared/dynamodb', mayImport: ['shared/domain', 'shared/runtime', 'shared/facts'] },
  { folder: 'shared/domain', mayImport: ['shared/runtime', 'shared/facts'] },
  { folder: 'shared/runtime', mayImport: ['shared/facts'] },
  { folder: 'shared/facts', mayImport: [] },
  // What makes each operation what it is, and the catalog of every function: no function bundles them, so a
  // memory, throttle, permission or sentence stated there redeploys no code. What functions need of an
  // operation, npm run generate writes into shared/facts/ and shared/checks/.
  { folder: 'shared/operations', mayImport: CHECKING },
  { folder: 'shared/catalog', mayImport: [...CHECKING, 'shared/operations'] },
  { folder: 'shared/contract', mayImport: [...BUNDLED, 'shared/catalog', 'shared/operations'] },
  // The hook's timeout follows from its checks (its time budget), which only the hook runs.
  { folder: 'infra', mayImport: [...BUNDLED, 'shared/catalog', 'shared/operations', 'functions/pre-traffic-hook/hook-time-budget.ts'] },
  { folder: 'local', mayImport: ['shared'] },
  { folder: 'tools', mayImport: ['functions', 'shared', 'infra', 'local'] },
];

/** The function a file of functions/ belongs to: its entry's base name, or its room's name. */
function ownerOf(file: string): string | undefined {
  return /^functions\/([^/.]+)/.exec(file)?.[1];
}

const graph = readImportGraph(PROJECT_ROOT);

describe('the import graph', () => {
  it('reads the repository: the functions import the HTTP adapter, the stores and the domain', () => {
    const handlerImports = graph.get('functions/create-pet.ts') ?? [];
    expect(handlerImports.some((file) => file.startsWith('shared/http/'))).toBe(true);
    expect(handlerImports.some((file) => file.startsWith('shared/dynamodb/'))).toBe(true);
    expect(handlerImports.some((file) => file.startsWith('shared/domain/'))).toBe(true);
  });

  it('has no cycle, type-only imports included', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it('has every arrow pointing down the layers: functions → http and dynamodb → domain → runtime → facts', () => {
    expect(findViolations(graph, LAYERS)).toEqual([]);
  });

  it("has no function importing another function's entry or room", () => {
    const across = [...graph].flatMap(([file, targets]) => {
      const owner = ownerOf(file);
      if (owner === undefined) return [];
      return targets.filter((target) => ownerOf(target) !== undefined && ownerOf(target) !== owner).map((target) => `${file} → ${target}`);
    });
    expect(across).toEqual([]);
  });

  it('gives every module outside test/ a file name no other room uses, so a name says its room', () => {
    const roomsByName = new Map<string, string[]>();
    for (const file of graph.keys()) {
      if (file.startsWith('test/')) continue;
      const name = file.slice(file.lastIndexOf('/') + 1);
      roomsByName.set(name, [...(roomsByName.get(name) ?? []), file]);
    }
    expect([...roomsByName.values()].filter((files) => files.length > 1)).toEqual([]);
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
      ['shared/domain/pets/pet-operations.ts', ['shared/http/errors.ts', 'shared/facts/routes.ts']],
      ['shared/facts/routes.ts', []],
    ]);
    expect(findViolations(upAndDown, LAYERS)).toEqual(['shared/domain/pets/pet-operations.ts → shared/http/errors.ts']);
  });

  it('read a type-only import as an edge', () => {
    // The idempotent operation imports nothing but the deadline's InvocationClock type from the runtime.
    expect(graph.get('shared/domain/idempotency/idempotent-operation.ts')).toContain('shared/runtime/deadline.ts');
  });
});
