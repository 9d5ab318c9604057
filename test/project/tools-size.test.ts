import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/** What developers and operators run stays in proportion to the product it serves: small enough to read whole. */
const MAX_TOOLS_LINES = 4_000;

describe('tools/', () => {
  it(`holds at most ${MAX_TOOLS_LINES} lines of code`, () => {
    const dir = join(PROJECT_ROOT, 'tools');
    const files = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((path) => /\.(ts|mjs)$/.test(path));
    const lines = files.reduce((total, path) => total + (readFileSync(join(dir, path), 'utf8').match(/\n/g)?.length ?? 0), 0);
    expect(lines).toBeLessThanOrEqual(MAX_TOOLS_LINES);
  });
});
