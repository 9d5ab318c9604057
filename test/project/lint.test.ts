import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../project-root';

const BIOME = resolve(PROJECT_ROOT, 'node_modules/.bin/biome');
/** Inside the repository, so the repository's settings apply; removed afterwards. */
const PROBES = join(PROJECT_ROOT, `lint-probe-${process.pid}`);
afterAll(() => rmSync(PROBES, { recursive: true, force: true }));

/** Checks `source` written at `path` (below a probe directory) with the gate's command (`npm run lint`): lint and format. */
function lint(path: string, source: string): { code: number | null; output: string } {
  const file = join(PROBES, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, source);
  const result = spawnSync(BIOME, ['check', '--error-on-warnings', file], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  rmSync(file);
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

describe('the lint gate npm test runs', () => {
  it.each([
    [
      'a promise nobody awaits',
      'src/probe.ts',
      'async function save(): Promise<void> {}\nexport function handle(): void {\n  save();\n}\n',
      'noFloatingPromises',
    ],
    ['a skipped test', 'test/unit/probe.test.ts', "import { it } from 'vitest';\nit.skip('runs', () => {});\n", 'noSkippedTests'],
    ['a focused test', 'test/unit/probe.test.ts', "import { it } from 'vitest';\nit.only('runs', () => {});\n", 'noFocusedTests'],
    ['an unused import', 'src/probe.ts', "import { readFileSync } from 'node:fs';\nexport const answer = 42;\n", 'noUnusedImports'],
    [
      'an unused variable',
      'src/probe.ts',
      'export function answer(): number {\n  const unused = 1;\n  return 42;\n}\n',
      'noUnusedVariables',
    ],
    ['`any` in code that ships', 'src/probe.ts', 'export function answer(value: any): number {\n  return value;\n}\n', 'noExplicitAny'],
    ['code the formatter would change', 'src/probe.ts', 'export const answer = { value : "42" }\n', 'format'],
  ])('refuses %s', (_, path, source, rule) => {
    const { code, output } = lint(path, source);
    expect(code).not.toBe(0);
    expect(output).toContain(rule);
  });

  it('accepts the same code written as the house style writes it', () => {
    const { code, output } = lint(
      'src/probe.ts',
      'async function save(): Promise<void> {}\nexport async function handle(): Promise<void> {\n  await save();\n}\n',
    );
    expect(output).not.toMatch(/lint\//);
    expect(code).toBe(0);
  });
});
