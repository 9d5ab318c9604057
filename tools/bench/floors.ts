import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_SHAPE } from '../../infra/api-function';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { RUNTIME_MAJOR } from '../lambda/lambda-runner';

/** Node's major version of the Lambda runtime, as esbuild's target: `node24`. */
const TARGET = `node${RUNTIME_MAJOR}`;

/**
 * Builds each function's floor (tools/bench/floors/) with the functions' own esbuild options but no source
 * map, so it is what a function costs with nothing of ours in it. Returns each bundle's directory, by handler.
 */
export async function buildFloors(handlers: readonly string[], outdir: string): Promise<Map<string, string>> {
  const floors = new Map<string, string>();
  for (const handler of handlers) {
    const taskRoot = join(outdir, 'floors', handler);
    mkdirSync(taskRoot, { recursive: true });
    await build({
      entryPoints: [join(PROJECT_ROOT, 'tools', 'bench', 'floors', `${handler}.ts`)],
      outfile: join(taskRoot, 'index.mjs'),
      bundle: true,
      platform: 'node',
      target: TARGET,
      format: BUNDLE_SHAPE.format,
      minify: BUNDLE_SHAPE.minify,
      mainFields: [...BUNDLE_SHAPE.mainFields],
      banner: { js: BUNDLE_SHAPE.banner },
      sourcemap: false,
      logLevel: 'warning',
    });
    floors.set(handler, taskRoot);
  }
  return floors;
}

/**
 * A copy of a floor with `extraBytes` of minified functions appended, each referenced but never run: beside
 * the floor, it measures what bytes alone cost at cold start (V8 only pre-parses a function until it first runs).
 */
export function writePaddedFloor(floorRoot: string, extraBytes: number, outdir: string): string {
  const taskRoot = join(outdir, 'floors', `${basename(floorRoot)}-padded`);
  mkdirSync(taskRoot, { recursive: true });
  const functions: string[] = [];
  let bytes = 0;
  for (let index = 0; bytes < extraBytes; index++) {
    const code = `function pad${index}(a,b){if(a.k${index % 7}===b)return a.v+${index};const c=[a,b].map(x=>x&&x.n${index % 5});return c.length>1?pad${index}(c[0],c[1]):null}`;
    functions.push(code);
    bytes += code.length + `pad${index},`.length;
  }
  const padding = `${functions.join('')}globalThis.__benchPadding=[${functions.map((_, index) => `pad${index}`).join(',')}];`;
  writeFileSync(join(taskRoot, 'index.mjs'), `${readFileSync(join(floorRoot, 'index.mjs'), 'utf8')}\n${padding}\n`);
  return taskRoot;
}
