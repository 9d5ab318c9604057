import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, posix } from 'node:path';
import ts from 'typescript';

/** A module of the repository and the repository modules it imports, type-only and dynamic imports included. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

const SOURCE = /\.(ts|mts|mjs)$/;
const RESOLVED = ['', '.ts', '.mts', '.mjs', '.d.mts', '.d.ts', '/index.ts'];
/** Folders that hold no file of ours: dependencies, build output, local data, releases. */
const SKIPPED = new Set(['node_modules', 'cdk.out', '.build', '.git', 'test-results', '.data', 'coverage', 'dist']);

/** The files of ours below `root` (repository-relative, `/`-separated) whose name `wanted` accepts. */
export function repositoryFiles(root: string, wanted: (name: string) => boolean, folder = ''): string[] {
  return readdirSync(join(root, folder)).flatMap((name) => {
    // Releases, and the lint test's probes (test/project/lint.test.ts), which it writes and removes while others read the tree.
    if (SKIPPED.has(name) || name.startsWith('release') || name.startsWith('lint-probe-')) return [];
    const path = posix.join(folder, name);
    if (statSync(join(root, path)).isDirectory()) return repositoryFiles(root, wanted, path);
    return wanted(name) ? [path] : [];
  });
}

/** The repository's modules below `root`: what is built, bundled or run, not dependencies or output. */
export function sourceFiles(root: string): string[] {
  return repositoryFiles(root, (name) => SOURCE.test(name));
}

/** Every module below `root` (repository-relative, `/`-separated) with the repository modules it imports. */
export function readImportGraph(root: string): ImportGraph {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(root)) {
    const { importedFiles } = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = importedFiles
      .map(({ fileName }) => fileName)
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => {
        // A `.js` names its `.ts` source, as TypeScript resolves it (the client package's imports: shared/client/).
        const base = posix.normalize(posix.join(posix.dirname(file), specifier.replace(/\.js$/, '')));
        const found = RESOLVED.map((ending) => base + ending).find(
          (candidate) => existsSync(join(root, candidate)) && statSync(join(root, candidate)).isFile(),
        );
        if (!found) throw new Error(`${file} imports ${specifier}, which is no file of the repository`);
        return found;
      });
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The import cycles of a graph, each as the modules around it, first repeated at the end. */
export function findCycles(graph: ImportGraph): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      if (state.get(target) === 'open') cycles.push([...path.slice(path.indexOf(target)), target]);
      else if (!state.has(target)) visit(target);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return cycles;
}

/** A folder's place in the layering: the folders its modules may import besides its own. */
export interface LayerRule {
  readonly folder: string;
  readonly mayImport: readonly string[];
}

const inside = (file: string, folder: string) => file === folder || file.startsWith(`${folder}/`);

/**
 * The imports that break the rules, as `importer → imported`: a module of a ruled folder may import
 * its own folder and those the rule names; the most specific rule (the longest folder) applies.
 */
export function findViolations(graph: ImportGraph, rules: readonly LayerRule[]): string[] {
  const ruleOf = (file: string) => [...rules].sort((a, b) => b.folder.length - a.folder.length).find((rule) => inside(file, rule.folder));
  const violations: string[] = [];
  for (const [file, targets] of graph) {
    const rule = ruleOf(file);
    if (!rule) continue;
    for (const target of targets) {
      const allowed = inside(target, rule.folder) || rule.mayImport.some((folder) => inside(target, folder));
      if (!allowed) violations.push(`${file} → ${target}`);
    }
  }
  return violations;
}
