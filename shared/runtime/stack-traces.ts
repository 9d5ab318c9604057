import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces in the original sources, paid for only when an error is logged: `--enable-source-maps`
 * would read the map at every cold start (docs/observability.md, "Stack traces"). The logger maps each
 * error it writes, in every function. In a bundle this module's URL is the bundle's, with its map beside
 * it; under tsx traces are already the sources'.
 */
const bundleUrl = import.meta.url;
const bundlePath = bundleUrl.startsWith('file:') ? fileURLToPath(bundleUrl) : bundleUrl;

/** undefined until an error needs it; null when there is no readable map. */
let sourceMap: SourceMap | null | undefined;

function loadSourceMap(): SourceMap | null {
  if (sourceMap === undefined) {
    try {
      sourceMap = /\.m?js$/.test(bundlePath) ? new SourceMap(JSON.parse(readFileSync(`${bundlePath}.map`, 'utf8'))) : null;
    } catch {
      sourceMap = null;
    }
  }
  return sourceMap;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Frames in the bundle, written as a path or a file URL: `…/index.js:LINE:COLUMN`. */
const FRAME = new RegExp(`(?:${escapeRegExp(bundleUrl)}|${escapeRegExp(bundlePath)}):(\\d+):(\\d+)`, 'g');

/**
 * A stack with its bundle positions replaced by source positions (`shared/domain/pets/pet-operations.ts:42:11`),
 * for the logger to print; unchanged where there is no map.
 */
export function mapStackToSources(stack: string): string {
  const map = loadSourceMap();
  if (map === null) return stack;
  return stack.replace(FRAME, (frame, line: string, column: string) => {
    const entry = map.findEntry(Number(line) - 1, Number(column) - 1) as {
      originalSource?: string;
      originalLine?: number;
      originalColumn?: number;
    };
    if (entry.originalSource === undefined) return frame;
    return `${entry.originalSource}:${entry.originalLine! + 1}:${entry.originalColumn! + 1}`;
  });
}
