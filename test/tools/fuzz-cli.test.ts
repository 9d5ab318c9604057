import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli';

describe('npm run fuzz', () => {
  it('refuses a function setting given in the shell, which its local API would replace, naming ENV_VARS', async () => {
    const result = await runCli('tools/fuzz.ts', ['--runs', '1'], { LIST_HEAD_CACHE_MS: '0' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Could not start the fuzz run: LIST_HEAD_CACHE_MS is set in the shell, .*ENV_VARS file/m);
    expect(result.stdout).not.toContain('Fuzzing');
  });
});
