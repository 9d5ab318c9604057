import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { stages } from '../../infra/stages';

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npx cdk synth', () => {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-cli-'));
  const outdir = join(work, 'cdk.out');
  let result: Run;

  beforeAll(async () => {
    const emptyNpmrc = join(work, 'npmrc');
    writeFileSync(emptyNpmrc, '');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      // No credentials anywhere: the synth must not need an account, a region lookup or AWS at all.
      AWS_SHARED_CREDENTIALS_FILE: join(work, 'no-credentials'),
      AWS_CONFIG_FILE: join(work, 'no-config'),
      AWS_EC2_METADATA_DISABLED: 'true',
      // The machine's own npm settings are not the project's: their warnings would be noise here.
      NPM_CONFIG_USERCONFIG: emptyNpmrc,
      CDK_DOCKER: 'docker-is-not-available',
    };
    for (const name of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_PROFILE',
      'AWS_REGION',
      'AWS_DEFAULT_REGION',
    ]) {
      delete env[name];
    }
    for (const name of Object.keys(env)) if (name.startsWith('npm_config_')) delete env[name];
    result = await run('npx', ['cdk', 'synth', '--quiet', '--output', outdir], env);
  }, 120_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('synthesizes one stack per stage offline, with no credentials and no Docker', () => {
    expect(result.code, result.stderr).toBe(0);
    const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string }>;
    };
    const stacks = Object.entries(manifest.artifacts)
      .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
      .map(([name]) => name);
    expect(stacks.sort()).toEqual(stages.map((stage) => stage.stackName).sort());
  });

  it("pins each stack of the assembly to its stage's account and region, which the CLI checks against the credentials at deploy", () => {
    const manifest = JSON.parse(readFileSync(join(outdir, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { environment?: string }>;
    };
    for (const stage of stages) {
      expect(manifest.artifacts[stage.stackName]?.environment, stage.name).toBe(`aws://${stage.account}/${stage.region}`);
    }
  });

  it('prints no warnings', () => {
    const warnings = `${result.stdout}\n${result.stderr}`.split('\n').filter((line) => /warn/i.test(line));
    expect(warnings).toEqual([]);
  });
});
