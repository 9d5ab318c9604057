import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { sourceFiles } from '../helpers/import-graph';

/**
 * Seams, not patches (house style): no module of the repository replaces, redefines, deletes or spies
 * on a member of a Node built-in module or of a global (process, console, Buffer, ...) to observe or
 * redirect it; whatever needs another destination takes it as a parameter or through a documented seam.
 */

/** What every module reaches without importing it: Node's globals and JavaScript's. */
const GLOBALS = new Set(Object.getOwnPropertyNames(globalThis));

/** Members that are data to set, not behaviour to replace: the environment and the exit code. */
const SETTABLE: readonly (readonly string[])[] = [
  ['process', 'env'],
  ['process', 'exitCode'],
];

/** The functions that write a property onto their first argument. */
const WRITERS = new Set([
  'Object.assign',
  'Object.defineProperty',
  'Object.defineProperties',
  'Object.setPrototypeOf',
  'Reflect.set',
  'Reflect.defineProperty',
  'Reflect.deleteProperty',
  'Reflect.setPrototypeOf',
]);

const isBuiltinModule = (specifier: string) => specifier.startsWith('node:') || builtinModules.includes(specifier);
const moduleName = (specifier: string) => specifier.replace(/^node:/, '');

/** Where `source` patches a built-in, as `file:line: code`. */
function findBuiltinPatches(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(
    fileName,
    source,
    ts.ScriptTarget.Latest,
    true,
    fileName.endsWith('js') ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  );
  // Names bound to a built-in module or one of its members (an import, a require, an alias), as the
  // path they stand for; and every other name the module declares, which hides a global of that name.
  const builtins = new Map<string, string[]>();
  const declared = new Set<string>();
  const bind = (name: ts.BindingName | undefined, path: string[] | undefined) => {
    if (name && ts.isIdentifier(name)) path ? builtins.set(name.text, path) : declared.add(name.text);
  };
  /** The built-in module a `require('…')` or `await import('…')` loads, if it is one. */
  const requiredModule = (initializer: ts.Expression | undefined): string | undefined => {
    const call = initializer && ts.isAwaitExpression(initializer) ? initializer.expression : initializer;
    if (!call || !ts.isCallExpression(call) || call.arguments.length !== 1) return undefined;
    const [specifier] = call.arguments;
    const loads =
      call.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(call.expression) && call.expression.text === 'require');
    return loads && ts.isStringLiteralLike(specifier!) && isBuiltinModule(specifier.text) ? moduleName(specifier.text) : undefined;
  };
  /** The built-in an expression stands for, as a path (`['process', 'stdout', 'write']`), or undefined if it is none. */
  const builtinPath = (expression: ts.Expression): string[] | undefined => {
    const members: string[] = [];
    let node: ts.Expression = expression;
    for (;;) {
      if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) {
        node = node.expression;
      } else if (ts.isPropertyAccessExpression(node)) {
        members.unshift(node.name.text);
        node = node.expression;
      } else if (ts.isElementAccessExpression(node)) {
        members.unshift(ts.isStringLiteralLike(node.argumentExpression) ? node.argumentExpression.text : '[computed]');
        node = node.expression;
      } else break;
    }
    if (!ts.isIdentifier(node)) return undefined;
    let root = node.text;
    if (root === 'globalThis' || root === 'global') {
      const first = members.shift();
      if (first === undefined || !GLOBALS.has(first)) return undefined;
      root = first;
    } else if (builtins.has(root)) {
      return [...builtins.get(root)!, ...members];
    } else if (declared.has(root) || !GLOBALS.has(root)) {
      return undefined;
    }
    return [root, ...members];
  };
  const collect = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && node.importClause) {
      const builtin = isBuiltinModule(node.moduleSpecifier.text) ? moduleName(node.moduleSpecifier.text) : undefined;
      const { name, namedBindings } = node.importClause;
      bind(name, builtin ? [builtin] : undefined);
      if (namedBindings && ts.isNamespaceImport(namedBindings)) bind(namedBindings.name, builtin ? [builtin] : undefined);
      if (namedBindings && ts.isNamedImports(namedBindings)) {
        for (const element of namedBindings.elements) {
          const member = (element.propertyName ?? element.name).text;
          bind(element.name, builtin ? (member === 'default' ? [builtin] : [builtin, member]) : undefined);
        }
      }
    } else if (ts.isVariableDeclaration(node)) {
      const builtin = requiredModule(node.initializer);
      if (ts.isObjectBindingPattern(node.name)) {
        for (const element of node.name.elements) {
          const member = element.propertyName && ts.isIdentifier(element.propertyName) ? element.propertyName.text : undefined;
          const local = ts.isIdentifier(element.name) ? element.name.text : undefined;
          bind(element.name, builtin && (member ?? local) ? [builtin, (member ?? local)!] : undefined);
        }
      } else bind(node.name, builtin ? [builtin] : node.initializer && builtinPath(node.initializer));
    } else if (ts.isParameter(node) || ts.isFunctionDeclaration(node) || ts.isClassDeclaration(node)) {
      bind(node.name && ts.isIdentifier(node.name) ? node.name : undefined, undefined);
    }
    ts.forEachChild(node, collect);
  };

  collect(file);
  const isPatch = (path: string[] | undefined) =>
    path !== undefined && !SETTABLE.some((settable) => settable.every((member, index) => path[index] === member));
  const dotted = (expression: ts.Expression) => expression.getText(file).replace(/\s+/g, '');

  const found: string[] = [];
  const report = (node: ts.Node) => {
    const { line } = file.getLineAndCharacterOfPosition(node.getStart(file));
    found.push(`${fileName}:${line + 1}: ${node.getText(file).replace(/\s+/g, ' ').slice(0, 100)}`);
  };
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && node.text === 'syncBuiltinESMExports') report(node);
    else if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind >= ts.SyntaxKind.FirstAssignment &&
      node.operatorToken.kind <= ts.SyntaxKind.LastAssignment &&
      isPatch(builtinPath(node.left))
    ) {
      report(node);
    } else if (ts.isDeleteExpression(node) && isPatch(builtinPath(node.expression))) report(node);
    else if (ts.isCallExpression(node)) {
      const callee = dotted(node.expression);
      const [first] = node.arguments;
      if ((WRITERS.has(callee) || callee === 'vi.spyOn') && first && isPatch(builtinPath(first))) report(node);
      if (['vi.mock', 'vi.doMock'].includes(callee) && first && ts.isStringLiteralLike(first) && isBuiltinModule(first.text)) report(node);
      if (callee === 'vi.stubGlobal' && first && ts.isStringLiteralLike(first) && GLOBALS.has(first.text)) report(node);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('the repository', () => {
  it('patches no Node built-in: nothing assigns to, redefines, deletes or spies on a member of one', () => {
    const modules = sourceFiles(PROJECT_ROOT);
    expect(modules).toContain('local/function-instance.mjs');
    const patches = modules.flatMap((file) => findBuiltinPatches(file, readFileSync(join(PROJECT_ROOT, file), 'utf8')));
    expect(patches).toEqual([]);
  });
});

describe('the check itself', () => {
  it.each([
    ['a built-in module’s function replaced', "import fs from 'node:fs';\nfs.writeSync = () => 0;\n"],
    ['a namespace import’s member redefined', "import * as fs from 'fs';\nObject.defineProperty(fs, 'writeSync', { value: () => 0 });\n"],
    ['the patch made visible to ES module importers', "import module from 'node:module';\nmodule.syncBuiltinESMExports();\n"],
    ['a stream of the process replaced', 'process.stdout.write = () => true;\n'],
    ['a member of an imported member replaced', "import { stderr } from 'node:process';\nstderr.write = () => true;\n"],
    ['a required module’s member replaced', "const { stdout } = require('node:process');\nstdout.write ||= () => true;\n"],
    ['console replaced through globalThis', 'globalThis.console = { log() {} };\n'],
    ['a global’s method replaced', "console['log'] = () => undefined;\n"],
    ['a stream reached through an alias', 'const out = process.stdout;\nout.write = () => true;\n'],
    ['a stream’s method deleted', 'delete process.stdout.write;\n'],
    ['a spy on a stream', "import { vi } from 'vitest';\nvi.spyOn(process.stdout, 'write');\n"],
    ['a built-in module mocked', "import { vi } from 'vitest';\nvi.mock('node:fs');\n"],
  ])('flags %s', (_, source) => {
    const patchingLine = source.trimEnd().split('\n').length;
    expect(findBuiltinPatches('sample.mjs', source)).toEqual([expect.stringMatching(new RegExp(`^sample\\.mjs:${patchingLine}: `))]);
  });

  it('accepts setting the environment and the exit code, a seam on globalThis, and objects of its own', () => {
    const source = [
      "process.env.LOG_LEVEL = 'DEBUG';",
      "process.env['TABLE'] = 'pets';",
      'Object.assign(process.env, { STAGE: "local" });',
      'delete process.env.AWS_PROFILE;',
      'process.exitCode = 1;',
      "const OUTPUT_DESTINATION = Symbol.for('animal-store.output-destination');",
      'globalThis[OUTPUT_DESTINATION] = (stream, line) => undefined;',
      'const stream = { write() {} };',
      'stream.write = () => true;',
      'function handle(console) { console.log = () => undefined; }',
      '',
    ].join('\n');
    expect(findBuiltinPatches('sample.mjs', source)).toEqual([]);
  });
});
