import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stages } from '../../infra/stages';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import type { ReleaseManifest } from '../../tools/release';
import type { CliResult } from '../helpers/cli';

const RELEASE = resolve(PROJECT_ROOT, 'tools/release.ts');
const BIOME = resolve(PROJECT_ROOT, 'node_modules/.bin/biome');
/** A release made earlier, of another commit: a rollback needs it exactly as it was. */
const EARLIER = '20000101-000000-0123456789ab';

/** `npm run release` in a checkout: offline, without AWS credentials of any kind, Docker or the machine's npm settings. */
function release(checkout: string, args: string[] = [], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...extraEnv,
    AWS_SHARED_CREDENTIALS_FILE: join(checkout, 'no-credentials'),
    AWS_CONFIG_FILE: join(checkout, 'no-config'),
    AWS_EC2_METADATA_DISABLED: 'true',
    // The machine's own npm settings are not the project's: their warnings would be noise here.
    NPM_CONFIG_USERCONFIG: join(checkout, 'no-npmrc'),
    CDK_DOCKER: 'docker-is-not-available',
  };
  for (const name of Object.keys(env)) {
    if (/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE|REGION|DEFAULT_REGION)$/.test(name)) delete env[name];
    if (name.startsWith('npm_config_')) delete env[name];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', RELEASE, ...args], { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolvePromise) => child.on('close', (code) => resolvePromise({ code: code ?? 1, stdout, stderr })));
}

function git(checkout: string, args: string[]): string {
  return execFileSync('git', args, { cwd: checkout, encoding: 'utf8' }).trim();
}

/** A clone of the repository's last commit, as a fresh checkout is, with the project's node_modules linked in. */
function cloneProject(checkout: string): void {
  execFileSync('git', ['clone', '--quiet', PROJECT_ROOT, checkout]);
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(checkout, 'node_modules'));
  // .gitignore's `node_modules/` matches the directory a real install makes, not this link to one.
  appendFileSync(join(checkout, '.git', 'info', 'exclude'), 'node_modules\n');
}

/** What a refusal must leave as it found it: everything git sees in a checkout, ignored files included, and the directories git does not list. */
function treeState(checkout: string): { readonly status: string; readonly entries: string[] } {
  return { status: git(checkout, ['status', '--porcelain', '--ignored', '--untracked-files=all']), entries: readdirSync(checkout).sort() };
}

/** Every file below a directory with its content, to tell whether anything in it changed. */
function snapshot(dir: string): Record<string, string> {
  const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile());
  return Object.fromEntries(
    files.map((entry) => [join(entry.parentPath, entry.name), readFileSync(join(entry.parentPath, entry.name), 'utf8')]),
  );
}

// A clone of the repository's last commit; the release command is the working tree's. Synthesis takes
// tens of seconds: it runs once.
describe('npm run release', () => {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-release-'));
  const checkout = join(work, 'checkout');
  let head: string;
  let first: CliResult;
  let name: string;
  let earlier: Record<string, string>;

  beforeAll(async () => {
    cloneProject(checkout);
    mkdirSync(join(checkout, 'releases', EARLIER), { recursive: true });
    const earlierManifest = { name: EARLIER, commit: '0123456789ab'.padEnd(40, '0'), synthesizedAt: '2000-01-01T00:00:00.000Z' };
    writeFileSync(join(checkout, 'releases', EARLIER, 'release.json'), JSON.stringify(earlierManifest));
    writeFileSync(join(checkout, 'releases', EARLIER, 'AnimalStore-Production.template.json'), '{"Resources":{}}\n');
    head = git(checkout, ['rev-parse', 'HEAD']);
    earlier = snapshot(join(checkout, 'releases', EARLIER));
    first = await release(checkout);
    name = readdirSync(join(checkout, 'releases')).find((entry) => entry !== EARLIER) ?? '';
  }, 300_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('writes releases/<commit date>-<commit>/ with every stage’s template and a manifest naming the commit', () => {
    expect(first.code, first.stderr).toBe(0);
    const commitTime = execFileSync('git', ['show', '-s', '--format=%cd', '--date=format-local:%Y%m%d-%H%M%S', 'HEAD'], {
      cwd: checkout,
      encoding: 'utf8',
      env: { ...process.env, TZ: 'UTC' },
    }).trim();
    expect(name).toBe(`${commitTime}-${head.slice(0, 12)}`);
    const dir = join(checkout, 'releases', name);
    const files = readdirSync(dir);
    for (const stage of stages) expect(files).toContain(`${stage.stackName}.template.json`);
    const manifest = JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8')) as ReleaseManifest;
    expect(manifest.commit).toBe(head);
    expect(manifest.stacks.map((stack) => stack.stackName).sort()).toEqual(stages.map((stage) => stage.stackName).sort());
    for (const stage of stages) {
      expect(manifest.stacks).toContainEqual(expect.objectContaining({ environment: `aws://${stage.account}/${stage.region}` }));
    }
  });

  it("synthesizes with the CDK CLI one stack per stage, each pinned to its stage's account and region, which the CLI checks against the credentials at deploy", () => {
    const assembly = JSON.parse(readFileSync(join(checkout, 'releases', name, 'manifest.json'), 'utf8')) as {
      artifacts: Record<string, { type: string; environment?: string }>;
    };
    const stacks = Object.entries(assembly.artifacts).filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack');
    expect(Object.fromEntries(stacks.map(([stackName, artifact]) => [stackName, artifact.environment]))).toEqual(
      Object.fromEntries(stages.map((stage) => [stage.stackName, `aws://${stage.account}/${stage.region}`])),
    );
  });

  it('shows each function as the CDK CLI bundles it, in its own words, and the CLI says no warning', () => {
    expect(first.stderr).toMatch(/^ {2}bundling listPets$/m);
    expect(`${first.stdout}\n${first.stderr}`.split('\n').filter((line) => /warn/i.test(line))).toEqual([]);
  });

  it("never prints the CDK CLI's temporary output path, its hint to supply a stack id, or its own bundling lines", () => {
    const output = `${first.stdout}\n${first.stderr}`;
    expect(output).not.toContain('.partial-');
    expect(output).not.toContain('Supply a stack id');
    expect(output).not.toContain('Bundling asset');
  });

  it('says how long synthesis took, as measured, never a fixed guess', () => {
    expect(first.stdout).not.toContain('about a minute');
    expect(first.stdout).toMatch(/, synthesized and checked in \d+\.\d s\.$/m);
  });

  it('prints the command that deploys the release to each stage, by its name', () => {
    for (const stage of stages) expect(first.stdout).toContain(`npx cdk deploy --app releases/${name} ${stage.stackName}`);
  });

  it('leaves an earlier release as it was, for a rollback to deploy', () => {
    expect(snapshot(join(checkout, 'releases', EARLIER))).toEqual(earlier);
  });

  it('leaves the working tree clean and the lint passing', () => {
    expect(git(checkout, ['status', '--porcelain'])).toBe('');
    const lint = (() => {
      try {
        return {
          code: 0,
          output: execFileSync(BIOME, ['check', '--error-on-warnings', '.'], { cwd: checkout, encoding: 'utf8', stdio: 'pipe' }),
        };
      } catch (error) {
        const failed = error as { status: number; stdout: string; stderr: string };
        return { code: failed.status, output: `${failed.stdout}${failed.stderr}` };
      }
    })();
    expect(lint.code, lint.output).toBe(0);
  });

  it('refuses, in one line, to release the same commit again, and leaves the release as it was', async () => {
    const before = snapshot(join(checkout, 'releases'));
    const again = await release(checkout);
    expect(again.code).not.toBe(0);
    expect(again.stderr.trim().split('\n')).toEqual([expect.stringContaining(`releases/${name}/ exists already`)]);
    expect(snapshot(join(checkout, 'releases'))).toEqual(before);
  });

  it.each([
    ['a changed file', 'README.md'],
    ['an untracked file', 'notes.txt'],
  ])('refuses, in one line, a working tree with %s, and synthesizes nothing', async (_change, file) => {
    const before = readdirSync(join(checkout, 'releases'));
    appendFileSync(join(checkout, file), 'not committed\n');
    try {
      const dirty = await release(checkout);
      expect(dirty.code).not.toBe(0);
      expect(dirty.stderr.trim().split('\n')).toEqual([expect.stringContaining('uncommitted or untracked changes')]);
      expect(readdirSync(join(checkout, 'releases'))).toEqual(before);
    } finally {
      git(checkout, ['checkout', '--', '.']);
      git(checkout, ['clean', '--force', '--quiet']);
    }
  });

  it('lists the releases, the earlier one first', async () => {
    const listed = await release(checkout, ['--list']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[0]),
    ).toEqual([EARLIER, name]);
  });
});

/** An app that builds the opposite of what it is asked: an ordinary release's groups and ReleaseKind when given --emergency, an emergency one's without. */
const OPPOSITE_APP = `import { App, CfnOutput, CfnResource, Stack } from 'aws-cdk-lib';
const buildsEmergency = !process.argv.includes('--emergency');
const app = new App();
const stack = new Stack(app, 'AnimalStore-Staging');
new CfnResource(stack, 'Group', {
  type: 'AWS::CodeDeploy::DeploymentGroup',
  properties: {
    ApplicationName: 'animal-store',
    ServiceRoleArn: 'arn:aws:iam::123456789012:role/codedeploy',
    DeploymentConfigName: buildsEmergency ? 'CodeDeployDefault.LambdaAllAtOnce' : 'CodeDeployDefault.LambdaCanary10Percent5Minutes',
    AlarmConfiguration: { Enabled: !buildsEmergency, Alarms: [{ Name: 'errors' }] },
  },
});
new CfnOutput(stack, 'ReleaseKind', { value: buildsEmergency ? 'emergency' : 'ordinary' });
app.synth();
`;

describe('npm run release, when what release.json would say is not what the templates are', () => {
  const work = mkdtempSync(join(tmpdir(), 'animal-store-release-kind-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('refuses an emergency context in ~/.cdk.json, which the CDK CLI merges into every synthesis, and leaves the tree as found', async () => {
    const checkout = join(work, 'home-context');
    cloneProject(checkout);
    const home = join(work, 'home');
    mkdirSync(home);
    writeFileSync(join(home, '.cdk.json'), JSON.stringify({ context: { emergency: true } }));
    const before = treeState(checkout);
    const refused = await release(checkout, [], { HOME: home });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('What cdk synth said:');
    expect(refused.stderr).toContain(
      'The context key "emergency" is set; remove it from ~/.cdk.json, cdk.json, cdk.context.json or --context',
    );
    expect(refused.stderr.trim().split('\n').at(-1)).toMatch(/^Refusing to release: cdk synth failed .*; nothing was released\.$/);
    expect(treeState(checkout)).toEqual(before);
  }, 120_000);

  it.each([
    [
      'an ordinary release whose templates are an emergency one',
      [],
      'not an ordinary release',
      '"emergency": false',
      'all at once with alarms ignored, output ReleaseKind is "emergency"',
    ],
    [
      'an emergency release whose templates are an ordinary one',
      ['--emergency'],
      'not an emergency release',
      '"emergency": true',
      'CodeDeployDefault.LambdaCanary10Percent5Minutes with alarms polled, output ReleaseKind is "ordinary"',
    ],
  ])(
    'refuses %s, in one line naming the stack and what disagrees, and leaves the tree as found',
    async (_case, args, kind, manifest, found) => {
      const checkout = join(work, `opposite${args.join('')}`);
      cloneProject(checkout);
      writeFileSync(join(checkout, 'opposite-app.mjs'), OPPOSITE_APP);
      const cdkJson = JSON.parse(readFileSync(join(checkout, 'cdk.json'), 'utf8')) as { app: string };
      writeFileSync(join(checkout, 'cdk.json'), `${JSON.stringify({ ...cdkJson, app: 'node opposite-app.mjs' }, null, 2)}\n`);
      git(checkout, ['add', '--all']);
      git(checkout, [
        '-c',
        'user.name=test',
        '-c',
        'user.email=test@example.com',
        'commit',
        '--quiet',
        '--message',
        'An app that builds the opposite',
      ]);
      const before = treeState(checkout);
      const refused = await release(checkout, args);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr.trim().split('\n').at(-1)).toBe(
        `Refusing to release: the templates are ${kind}, as release.json would say (${manifest}): AnimalStore-Staging: group Group is ${found}. Nothing was released.`,
      );
      expect(treeState(checkout)).toEqual(before);
    },
    120_000,
  );
});
