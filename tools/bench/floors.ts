import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_SHAPE } from '../../infra/api-function';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { RUNTIME_MAJOR } from '../lambda/lambda-runner';

/** The functions' own esbuild options but no source map: a floor costs what a function does with nothing of ours in it. */
export async function buildFloors(handlers: readonly string[], outdir: string): Promise<Map<string, string>> {
  const floors = new Map<string, string>();
  for (const handler of handlers) {
    const taskRoot = join(outdir, 'floors', handler);
    mkdirSync(taskRoot, { recursive: true });
    await build({
      entryPoints: [join(PROJECT_ROOT, 'tools', 'bench', 'floors', `${handler}-floor.ts`)],
      outfile: join(taskRoot, 'index.mjs'),
      bundle: true,
      platform: 'node',
      target: `node${RUNTIME_MAJOR}`,
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
