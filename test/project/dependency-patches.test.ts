import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/**
 * `npm install` ends with the postinstall script, which applies local/patches. A patch that no longer
 * applies (the package changed under it) must fail the install, naming the package: printed and
 * passed over, it leaves dynalite unpatched, and the leak its patch fixes back.
 */
const DYNALITE_DB = 'node_modules/dynalite/db/index.js';

let root: string | undefined;
afterEach(async () => {
  if (root !== undefined) await rm(root, { recursive: true, force: true });
  root = undefined;
});

/**
 * What `npm install` has put in place when it runs the postinstall script: package.json and the patches
 * as they are, patch-package, and dynalite's package with `db` as its db/index.js (the file the patch edits).
 */
async function installedWith(db: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'animal-store-postinstall-'));
  root = dir;
  await cp(join(PROJECT_ROOT, 'package.json'), join(dir, 'package.json'));
  await cp(join(PROJECT_ROOT, 'local/patches'), join(dir, 'local/patches'), { recursive: true });
  await mkdir(join(dir, 'node_modules/dynalite/db'), { recursive: true });
  await mkdir(join(dir, 'node_modules/.bin'));
  await cp(join(PROJECT_ROOT, 'node_modules/dynalite/package.json'), join(dir, 'node_modules/dynalite/package.json'));
  await writeFile(join(dir, DYNALITE_DB), db);
  await symlink(join(PROJECT_ROOT, 'node_modules/patch-package/index.js'), join(dir, 'node_modules/.bin/patch-package'));
  return dir;
}

/** Runs the postinstall script with npm, on a developer's machine: not CI, no NODE_ENV (patch-package fails on either by itself). */
function runPostinstall(dir: string): Promise<{ code: number; output: string }> {
  const { NODE_ENV: _, ...env } = process.env;
  return new Promise((resolve) => {
    execFile('npm', ['run', '--silent', 'postinstall'], { cwd: dir, env: { ...env, CI: 'false' } }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/** dynalite 4.0.0's db/index.js as published: the project's copy with its patch taken back out. */
async function publishedDb(): Promise<string> {
  const patched = await readFile(join(PROJECT_ROOT, DYNALITE_DB), 'utf8');
  return patched.replaceAll('iterator.close', 'iterator.return');
}

describe('npm install', () => {
  it('applies the dynalite patch to the published package', async () => {
    const dir = await installedWith(await publishedDb());
    const result = await runPostinstall(dir);
    expect(result, result.output).toMatchObject({ code: 0 });
    expect(result.output).toMatch(/dynalite@4\.0\.0 ✔/);
    expect(await readFile(join(dir, DYNALITE_DB), 'utf8')).toBe(await readFile(join(PROJECT_ROOT, DYNALITE_DB), 'utf8'));
  });

  it('fails, naming the package, when its patch cannot apply', async () => {
    // A release that reworded the lines around the patched ones.
    const dir = await installedWith((await publishedDb()).replaceAll('destroy (err, callback) {', 'destroy (error, callback) {'));
    const result = await runPostinstall(dir);
    expect(result.code).not.toBe(0);
    expect(result.output).toMatch(/\*\*ERROR\*\* Failed to apply patch for package dynalite at path\s+node_modules\/dynalite/);
  });
});
