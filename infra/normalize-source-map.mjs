// Rewrites a bundle's source map `sources` (the file named by the first argument) relative to the
// repository root: the asset hash covers the map, so checkout-dependent paths would make one commit's
// templates differ between machines. Plain JavaScript, run by NodejsFunction's afterBundling hook.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const mapFile = process.argv[2];
const map = JSON.parse(readFileSync(mapFile, 'utf8'));
const base = resolve(dirname(mapFile), map.sourceRoot ?? '');
map.sources = map.sources.map((source) => relative(projectRoot, resolve(base, source)).split(sep).join('/'));
delete map.sourceRoot;
writeFileSync(mapFile, JSON.stringify(map));
