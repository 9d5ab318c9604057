import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_SHAPE, PROJECT_ROOT } from '../infra/api-function';
import { RUNTIME_MAJOR } from '../test/infra/lambda-runner';

/** Node's major version of the Lambda runtime, as esbuild's target: `node24`. */
const TARGET = `node${RUNTIME_MAJOR}`;

/**
 * Builds each function's floor (bench/floors/) as NodejsFunction builds the functions (same esbuild,
 * same target, format, minification, main fields and banner) but without a source map: the floor is
 * what a function would cost with nothing of ours in it. Returns the directory of each bundle, by
 * handler file name.
 */
export async function buildFloors(handlers: readonly string[], outdir: string): Promise<Map<string, string>> {
  const floors = new Map<string, string>();
  for (const handler of handlers) {
    const taskRoot = join(outdir, 'floors', handler);
    mkdirSync(taskRoot, { recursive: true });
    await build({
      entryPoints: [join(PROJECT_ROOT, 'bench', 'floors', `${handler}.ts`)],
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
