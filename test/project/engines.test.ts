import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/**
 * `engines` says which Node the toolchain needs, and npm warns (EBADENGINE) on `npm install` when an
 * installed package asks for more: so it admits only the versions every installed package accepts.
 */
const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; optional?: boolean; engines?: { node?: string } | string[] }>;
};
const engines = manifest.engines.node;

describe("package.json's engines", () => {
  it('admits only Node versions that every package npm installs accepts, so npm install warns of no engine', () => {
    const refusing = Object.entries(lock.packages)
      // Optional packages are platform builds npm skips where they do not fit, without a warning.
      .filter(([path, entry]) => path !== '' && !entry.optional && !Array.isArray(entry.engines) && entry.engines?.node !== undefined)
      .filter(([, entry]) => !semver.subset(engines, (entry.engines as { node: string }).node))
      .map(([path, entry]) => `${path} needs ${(entry.engines as { node: string }).node}`);
    expect(refusing).toEqual([]);
  });

  it('admits the Node every npm script runs on (the node devDependency)', () => {
    const projectNode = lock.packages['node_modules/node']?.version;
    expect(projectNode).toBeDefined();
    expect(semver.satisfies(projectNode!, engines)).toBe(true);
  });

  it('is what the README says a machine needs', () => {
    const minimum = semver.minVersion(engines)!;
    expect(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')).toContain(`Node ${minimum.major}.${minimum.minor} or later`);
  });
});
