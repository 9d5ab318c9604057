import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { writePaddedFloor } from '../../../tools/bench/floors';

const work = mkdtempSync(join(tmpdir(), 'animal-store-padded-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("the bench's padded floor", () => {
  it('is the floor with at least as many bytes of code appended, which loads and leaves the handler as it was', async () => {
    const floor = join(work, 'floor');
    mkdirSync(floor);
    writeFileSync(join(floor, 'index.mjs'), 'export const handler = async () => ({ statusCode: 200 });\n');
    const padded = writePaddedFloor(floor, 20_000, work);

    const added = statSync(join(padded, 'index.mjs')).size - statSync(join(floor, 'index.mjs')).size;
    expect(added).toBeGreaterThanOrEqual(20_000);
    expect(added).toBeLessThan(20_500);
    const module = (await import(pathToFileURL(join(padded, 'index.mjs')).href)) as { handler: () => Promise<unknown> };
    expect(await module.handler()).toEqual({ statusCode: 200 });
  });
});
