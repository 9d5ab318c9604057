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

  it('runs for a few minutes unless told otherwise, and its usage says so', async () => {
    const result = await runCli('tools/fuzz.ts', ['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/--minutes M\s+stop after M minutes \(3 unless --runs is given\)/);
  });

  it('says how long it will run, then shows progress and a summary, never a function log line', async () => {
    const result = await runCli('tools/fuzz.ts', ['--minutes', '0.2', '--seed', '1']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Fuzzing http:\/\/\S+ for 0\.2 minutes, seed 1\n/);
    expect(result.stdout).toMatch(/^ {2}\d+ cases in 10 s \(\d+\/s\)$/m);
    expect(result.stdout).toMatch(/^\d+ cases held in 1\d\.\d s \(the time limit\), seed 1; the server is still up\.$/m);
    expect(result.stdout).not.toContain('platform.start');
    expect(result.stdout.split('\n').filter((line) => line.startsWith('{'))).toEqual([]);
    expect(result.stderr).toBe('');
  }, 60_000);

  it('with --runs, says how many cases it will run and runs that many', async () => {
    const result = await runCli('tools/fuzz.ts', ['--runs', '5', '--seed', '1']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Fuzzing http:\/\/\S+ for 5 cases, seed 1\n/);
    expect(result.stdout).toMatch(/^5 cases held in /m);
    expect(result.stdout.trim().split('\n')).toHaveLength(4);
  }, 60_000);
});
