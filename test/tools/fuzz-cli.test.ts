import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli';

describe('npm run fuzz', () => {
  it('answers an unknown option with what is wrong and the usage, exit 2, not a stack trace', async () => {
    const result = await runCli('tools/fuzz.ts', ['--run', '1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Unknown option '--run'.*\n\nUsage: npm run fuzz/s);
    expect(result.stdout).not.toContain('Fuzzing');
  });

  it('refuses a function setting given in the shell, which its local API would replace, naming ENV_VARS', async () => {
    const result = await runCli('tools/fuzz.ts', ['--runs', '1'], { PETS_LISTING_SHARDS: '8' });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^Could not start the fuzz run: PETS_LISTING_SHARDS is set in the shell, .*ENV_VARS file/m);
    expect(result.stdout).not.toContain('Fuzzing');
  });
});
