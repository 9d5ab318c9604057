import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE_SHAPE } from '../../infra/api-function';
import { fileNameOf, type ApiFunctionName } from '../../shared/facts/function-names';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { RUNTIME_MAJOR } from '../lambda/lambda-runner';

/**
 * Each function's floor (tools/bench/floors/<fileNameOf(name)>-floor.ts), built with the functions' own esbuild
 * options but no source map: a floor costs what a function does with nothing of ours in it. Returns each bundle's directory.
 */
export async function buildFloors(names: readonly ApiFunctionName[], outdir: string): Promise<Map<ApiFunctionName, string>> {
  const floors = new Map<ApiFunctionName, string>();
  for (const name of names) {
    const taskRoot = join(outdir, 'floors', fileNameOf(name));
    mkdirSync(taskRoot, { recursive: true });
    await build({
      entryPoints: [join(PROJECT_ROOT, 'tools', 'bench', 'floors', `${fileNameOf(name)}-floor.ts`)],
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
    floors.set(name, taskRoot);
  }
  return floors;
}
