import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECK_FUNCTION_HANDLERS } from '../../../shared/runtime/function-config';
import { FUNCTIONS_DIR } from '../../../shared/facts/project-layout';
import { buildFloors } from '../../../tools/bench/floors';

const work = mkdtempSync(join(tmpdir(), 'animal-store-floors-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the bench's floors", () => {
  it('build for every API function in functions/, each into its own bundle', async () => {
    const checks: readonly string[] = Object.values(CHECK_FUNCTION_HANDLERS);
    const handlers = readdirSync(FUNCTIONS_DIR)
      .map((file) => file.replace(/\.ts$/, ''))
      .filter((handler) => !checks.includes(handler));
    const floors = await buildFloors(handlers, work);
    expect([...floors.keys()].sort()).toEqual([...handlers].sort());
    for (const taskRoot of floors.values()) expect(existsSync(join(taskRoot, 'index.mjs'))).toBe(true);
    expect(new Set(floors.values()).size).toBe(handlers.length);
  });
});
