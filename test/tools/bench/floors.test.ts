import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { API_FUNCTIONS } from '../../../shared/facts/function-names';
import { buildFloors } from '../../../tools/bench/floors';

const work = mkdtempSync(join(tmpdir(), 'animal-store-floors-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the bench's floors", () => {
  it('build for every function behind the API, each into its own bundle', async () => {
    const floors = await buildFloors(API_FUNCTIONS, work);
    expect([...floors.keys()].sort()).toEqual([...API_FUNCTIONS].sort());
    for (const taskRoot of floors.values()) expect(existsSync(join(taskRoot, 'index.mjs'))).toBe(true);
    expect(new Set(floors.values()).size).toBe(API_FUNCTIONS.length);
  });
});
