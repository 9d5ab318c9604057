import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/**
 * `npm install` rewrites package-lock.json whenever its copy of the root package differs from
 * package.json: a fresh clone then shows a modified file, and `npm run release` refuses the tree.
 */
const ROOT_FIELDS = ['name', 'version', 'dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies', 'engines'] as const;

type Manifest = Partial<Record<(typeof ROOT_FIELDS)[number], unknown>>;

/** The fields of the root package where the lockfile and package.json disagree. */
function rootPackageDrift(manifest: Manifest, lockRoot: Manifest): string[] {
  return ROOT_FIELDS.filter((field) => JSON.stringify(manifest[field]) !== JSON.stringify(lockRoot[field]));
}

const read = (file: string) => JSON.parse(readFileSync(join(PROJECT_ROOT, file), 'utf8'));

describe('package-lock.json', () => {
  it("holds package.json's root package as it is, so npm install leaves a fresh clone unmodified", () => {
    const lock = read('package-lock.json') as { name: string; version: string; packages: Record<string, Manifest> };
    const manifest = read('package.json') as Manifest;
    expect(rootPackageDrift(manifest, lock.packages['']!)).toEqual([]);
    expect([lock.name, lock.version]).toEqual([manifest.name, manifest.version]);
  });

  it('is told out of step by an engines range package.json no longer has', () => {
    const manifest = { name: 'a', engines: { node: '^22.12.0' } };
    expect(rootPackageDrift(manifest, { ...manifest, engines: { node: '>=20' } })).toEqual(['engines']);
  });
});
