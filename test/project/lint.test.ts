import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

const BIOME = resolve(PROJECT_ROOT, 'node_modules/.bin/biome');
/** Inside the repository, so the repository's settings apply; removed afterwards. */
const PROBES = join(PROJECT_ROOT, `lint-probe-${process.pid}`);

/** Code the gate must refuse: what it is, where it is written (below the probe directory), its source, the rule that names it. */
const REFUSED: readonly (readonly [string, string, string, string])[] = [
  [
    'a promise nobody awaits',
    'shared/floating-promise.ts',
    'async function save(): Promise<void> {}\nexport function handle(): void {\n  save();\n}\n',
    'noFloatingPromises',
  ],
  ['a skipped test', 'test/unit/skipped.test.ts', "import { it } from 'vitest';\nit.skip('runs', () => {});\n", 'noSkippedTests'],
  ['a focused test', 'test/unit/focused.test.ts', "import { it } from 'vitest';\nit.only('runs', () => {});\n", 'noFocusedTests'],
  [
    'an unused import',
    'shared/unused-import.ts',
    "import { readFileSync } from 'node:fs';\nexport const answer = 42;\n",
    'noUnusedImports',
  ],
  [
    'an unused variable',
    'shared/unused-variable.ts',
    'export function answer(): number {\n  const unused = 1;\n  return 42;\n}\n',
    'noUnusedVariables',
  ],
  [
    '`any` in code that ships',
    'shared/explicit-any.ts',
    'export function answer(value: any): number {\n  return value;\n}\n',
    'noExplicitAny',
  ],
  ['code the formatter would change', 'shared/unformatted.ts', 'export const answer = { value : "42" }\n', 'format'],
];

/** The same code as the house style writes it. */
const ACCEPTED = [
  'shared/house-style.ts',
  'async function save(): Promise<void> {}\nexport async function handle(): Promise<void> {\n  await save();\n}\n',
] as const;

/** What the gate reported for each probe: its warnings and errors, one line each, by path below the probe directory. */
let findings: Map<string, string[]>;
let code: number | null;
let output: string;

// One run of the gate's command (`npm run lint`: lint and format, warnings as errors) over every
// probe: each run scans the project first, which costs far more than checking a file. The GitHub
// reporter names the file of each finding, so each probe is judged on its own.
beforeAll(() => {
  const probes = [...REFUSED.map(([, path, source]) => [path, source] as const), ACCEPTED];
  for (const [path, source] of probes) {
    const file = join(PROBES, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, source);
  }
  const files = probes.map(([path]) => join(PROBES, path));
  const result = spawnSync(BIOME, ['check', '--error-on-warnings', '--reporter=github', ...files], { cwd: PROJECT_ROOT, encoding: 'utf8' });
  code = result.status;
  output = `${result.stdout}${result.stderr}`;
  findings = new Map(probes.map(([path]) => [path, []]));
  for (const line of output.split('\n')) {
    const match = /^::(?:error|warning) .*\bfile=([^,]+),/.exec(line);
    if (!match) continue;
    const path = resolve(match[1]!).slice(PROBES.length + 1);
    findings.get(path)?.push(line);
  }
});
afterAll(() => rmSync(PROBES, { recursive: true, force: true }));

describe('the lint gate npm test runs', () => {
  it('fails when any file breaks a rule', () => {
    expect(code, output).not.toBe(0);
  });

  it.each(REFUSED)('refuses %s', (_, path, _source, rule) => {
    const found = findings.get(path)!;
    expect(found.length, output).toBeGreaterThan(0);
    expect(found.join('\n')).toContain(rule);
  });

  it('accepts the same code written as the house style writes it', () => {
    expect(findings.get(ACCEPTED[0]), output).toEqual([]);
  });
});
