import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli';

describe('tools/local-memory.ts', () => {
  it("prints npm start's resident memory before the listings and after each 500", async () => {
    const result = await runCli('tools/local-memory.ts', ['--listings', '500', '--clients', '2']);
    expect(result.code, result.stderr).toBe(0);
    const rows = result.stdout.trim().split('\n').slice(1);
    expect(rows.map((row) => row.trim().split(/\s+/)[0])).toEqual(['0', '500']);
    for (const row of rows) expect(Number(row.trim().split(/\s+/)[1])).toBeGreaterThan(0);
  });

  it('answers a count that is not a whole number with the usage and exit 2', async () => {
    const result = await runCli('tools/local-memory.ts', ['--listings', 'many']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--listings takes a whole number, not "many".');
    expect(result.stderr).toContain('Usage: npx tsx tools/local-memory.ts');
  });
});
