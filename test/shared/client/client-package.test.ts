import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { startTestApi, type TestApi } from '../../helpers/local-api';

const run = promisify(execFile);
const CLIENT = join(PROJECT_ROOT, 'shared', 'client');
/** The compiler npm run typecheck runs, standing in for the one a user's project has. */
const TSC = join(PROJECT_ROOT, 'node_modules', 'typescript-7', 'bin', 'tsc');

/** The README's example of the client: the `ts` block that imports it. */
function readmeExample(): string {
  const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
  const block = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)]
    .map((match) => match[1]!)
    .find((code) => code.includes("'@animal-store/client'"));
  if (block === undefined) throw new Error('README.md has no example importing @animal-store/client');
  return block;
}

interface Packed {
  readonly filename: string;
  readonly size: number;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

let work: string;
let app: string;
let packed: Packed;
let api: TestApi;

/** TypeScript's errors for the app under strict options laid over `compilerOptions`; '' when none. */
async function typeErrors(compilerOptions: Record<string, unknown>): Promise<string> {
  const config = { compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out', ...compilerOptions } };
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(config));
  return run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: app }).then(
    () => '',
    (error: { stdout?: string }) => error.stdout || String(error),
  );
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'animal-store-client-'));
  // Packed from a copy, so the build npm pack runs leaves the checkout as it was.
  const source = join(work, 'client');
  cpSync(CLIENT, source, { recursive: true, filter: (path) => !/[/\\](dist|node_modules)$|\.tgz$/.test(path) });
  const path = [join(PROJECT_ROOT, 'node_modules', '.bin'), process.env.PATH].join(delimiter);
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: source, env: { ...process.env, PATH: path } });
  [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as [Packed];

  app = join(work, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-empty-project', private: true, type: 'module' }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(work, packed.filename)], { cwd: app });
  api = await startTestApi();
}, 120_000);
afterAll(async () => {
  await api?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the client package, packed with npm pack', () => {
  it('holds its compiled modules, their types and its package.json, and depends on nothing', () => {
    const paths = packed.files.map((file) => file.path).sort();
    expect(paths).toContain('dist/create-client.js');
    expect(paths).toContain('dist/create-client.d.ts');
    expect(paths.filter((file) => !/^dist\/[a-z-]+\.(js|d\.ts)$/.test(file))).toEqual(['package.json']);
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules', '@animal-store', 'client', 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: '@animal-store/client', type: 'module' });
    expect(Object.keys(manifest).filter((key) => /dependencies$/i.test(key))).toEqual([]);
  });

  it("installs into an empty project where the README's example type-checks strictly, with the DOM's types or only Node's", async () => {
    writeFileSync(join(app, 'example.ts'), readmeExample());
    expect(await typeErrors({ target: 'ES2022', types: [] })).toBe('');
    mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
    symlinkSync(join(PROJECT_ROOT, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir');
    expect(await typeErrors({ target: 'ES2022', lib: ['ES2024'], types: ['node'] })).toBe('');
  });

  it("runs the README's example there against the local API: the pet it creates is listed", async () => {
    const example = readmeExample()
      .replace('http://localhost:3000/v1', api.baseUrl)
      .replace(/'pets_[^']*'/, `'${api.apiKey}'`);
    writeFileSync(join(app, 'example.ts'), example);
    expect(await typeErrors({ target: 'ES2022', types: [] })).toBe('');
    const { stdout } = await run(process.execPath, [join(app, 'out', 'example.js')], { cwd: app });
    expect(
      stdout
        .trim()
        .split('\n')
        .filter((line) => / Rex true$/.test(line)),
    ).toHaveLength(1);
  });

  it('refuses there, at compile time, a pet the API would refuse', async () => {
    writeFileSync(join(app, 'example.ts'), "import { createClient } from '@animal-store/client';\n");
    writeFileSync(
      join(app, 'wrong.ts'),
      "import { createClient } from '@animal-store/client';\n" +
        "await createClient({ baseUrl: 'http://localhost:3000/v1' }).createPet({ name: 'Rex', categoryId: '1' });\n",
    );
    expect(await typeErrors({ target: 'ES2022', types: [] })).toMatch(
      /^wrong\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/m,
    );
    rmSync(join(app, 'wrong.ts'));
  });
});
