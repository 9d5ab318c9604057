// Rewrites the `sources` of a bundle's source map (the file named by the first argument) from paths
// relative to the temporary bundling directory (`../../../home/you/animal-store/shared/…`, which
// depend on where the repository is checked out) to paths relative to the repository root
// (`shared/…`). The asset's hash covers the map, so without this every checkout path gave the
// templates different asset hashes: one commit, different templates on different machines.
// Plain JavaScript, run by NodejsFunction's afterBundling hook with whatever `node` is on the PATH.
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
