import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { BUNDLE_SHAPE } from '../../infra/api-function';
import { fileNameOf, type ApiFunctionName } from '../../shared/facts/function-names';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { RUNTIME_MAJOR } from '../lambda/lambda-runner';

/**
 * The builds of the floors a function's cold start is compared with, each without a source map: a floor costs what a
 * function does with nothing of ours in it. `file` is the handler file Lambda's runtime loads.
 */
export const FLOOR_BUILDS = {
  /** As the functions are built (BUNDLE_SHAPE): what the design's calls cost alone, so the ratio is what our code adds; warm requests are judged against it. */
  alike: {
    file: BUNDLE_SHAPE.file,
    options: {
      format: BUNDLE_SHAPE.format,
      minify: BUNDLE_SHAPE.minify,
      mainFields: [...BUNDLE_SHAPE.mainFields],
      supported: BUNDLE_SHAPE.supported,
      define: BUNDLE_SHAPE.define,
      banner: { js: BUNDLE_SHAPE.banner },
    },
  },
  /** A fixed reference: ES modules, their builds of packages first, `require` made with createRequire, as the functions once were. */
  esm: {
    file: 'index.mjs',
    options: {
      format: 'esm',
      minify: true,
      mainFields: ['module', 'main'],
      banner: { js: "import { createRequire } from 'module';const require = createRequire(import.meta.url);" },
    },
  },
  /**
   * As CDK's NodejsFunction builds by default: CommonJS, with esbuild's main fields for Node (packages' CommonJS
   * builds first). Minified as ours are, where its default is not: unminified, the reference would only cost more.
   */
  cdkDefault: { file: 'index.js', options: { format: 'cjs', minify: true } },
} as const satisfies Record<string, { file: string; options: BuildOptions }>;

export type FloorBuild = keyof typeof FLOOR_BUILDS;

/** Each function's floor (tools/bench/floors/<fileNameOf(name)>-floor.ts) built as `shape`, into a task root of its own under `outdir`. */
export async function buildFloors(
  names: readonly ApiFunctionName[],
  outdir: string,
  shape: FloorBuild = 'alike',
): Promise<Map<ApiFunctionName, string>> {
  const floors = new Map<ApiFunctionName, string>();
  const { file, options } = FLOOR_BUILDS[shape];
  for (const name of names) {
    const taskRoot = join(outdir, 'floors', shape, fileNameOf(name));
    mkdirSync(taskRoot, { recursive: true });
    await build({
      entryPoints: [join(PROJECT_ROOT, 'tools', 'bench', 'floors', `${fileNameOf(name)}-floor.ts`)],
      outfile: join(taskRoot, file),
      bundle: true,
      platform: 'node',
      target: `node${RUNTIME_MAJOR}`,
      sourcemap: false,
      logLevel: 'warning',
      ...options,
    });
    floors.set(name, taskRoot);
  }
  return floors;
}
