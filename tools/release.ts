import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { EMERGENCY_ARGUMENT } from '../infra/animal-store-app';
import { RELEASE_KIND_OUTPUT, WAY_BACK, type ReleaseKind } from '../infra/release-kind';
import { stages } from '../infra/stages';
import { parseCommandLine } from './command-line';

// `npm run release`: both stages deploy the same synthesized directory and a rollback an older one, so no release
// is overwritten or removed here.
const RELEASES_DIR = 'releases';
const RELEASE_MANIFEST = 'release.json';
/** Characters of the commit id in a release's name: fixed, where git's own abbreviation grows with the repository. */
const SHA_LENGTH = 12;
/** The deployment configuration of an emergency release's groups (infra/animal-store-stack.ts). */
const ALL_AT_ONCE = 'CodeDeployDefault.LambdaAllAtOnce';

const usage = `Usage: npm run release [-- --list | --emergency]

Synthesizes the commit checked out (HEAD) into ${RELEASES_DIR}/<yyyymmdd>-<hhmmss>-<commit>/ (the commit's
date in UTC, so names sort by commit time), with ${RELEASE_MANIFEST}: the commit, its date, when it was
synthesized, the Node.js, CDK and esbuild versions, and each stack with its account and region.
Prints the commands that deploy it. Refuses a working tree with uncommitted or untracked changes (the
release would not be the commit it is named after), a release that exists already (delete its
directory by hand to synthesize that commit again), and templates that disagree with ${RELEASE_MANIFEST}'s
"emergency" (their deployment groups and their ${RELEASE_KIND_OUTPUT} output).

  --list       list the releases of this checkout, oldest first, and exit
  --emergency  the same commit as an emergency release, <name>-emergency: every function moves at once
               and CodeDeploy ignores the alarms, so it deploys while one is in ALARM (a rollback or a
               restore mid-incident, docs/operations.md, "While an alarm is in ALARM"). The way
               back: the same commit as an ordinary release, once the alarms have cleared.`;

export interface ReleaseManifest {
  readonly name: string;
  readonly commit: string;
  /** The commit's committer date (ISO 8601, UTC). */
  readonly commitDate: string;
  /** An emergency release: all at once, alarms ignored (--emergency). */
  readonly emergency: boolean;
  /** When the release was synthesized (ISO 8601, UTC). */
  readonly synthesizedAt: string;
  readonly versions: { readonly node: string; readonly awsCdkCli: string; readonly awsCdkLib: string; readonly esbuild: string };
  readonly stacks: readonly { readonly stackName: string; readonly environment: string; readonly templateFile: string }[];
  /** The commands that deploy this release, one per stack, staging first. */
  readonly deploy: readonly string[];
}

/** Why a release was not made: one line, for an operator. */
class Refusal extends Error {}

/** As much of a synthesized template as the release checks. */
export interface TemplateJson {
  readonly Resources?: Record<
    string,
    {
      readonly Type: string;
      readonly Properties?: { readonly DeploymentConfigName?: unknown; readonly AlarmConfiguration?: { readonly Enabled?: unknown } };
    }
  >;
  readonly Outputs?: Record<string, { readonly Value?: unknown }>;
}

/**
 * How a stack's template disagrees with the kind of release its manifest names, one phrase each; none when
 * they agree. An emergency release's deployment groups all move all at once with their alarms ignored, an
 * ordinary release's none of them, and the ReleaseKind output says which: what a deploy does is what
 * release.json says, and what the stage then says of itself.
 */
export function templateDisagreements(template: TemplateJson, emergency: boolean): string[] {
  const kind: ReleaseKind = emergency ? 'emergency' : 'ordinary';
  const groups = Object.entries(template.Resources ?? {}).filter(([, resource]) => resource.Type === 'AWS::CodeDeploy::DeploymentGroup');
  const disagreements = groups.length === 0 ? ['no deployment group'] : [];
  for (const [id, group] of groups) {
    const config = group.Properties?.DeploymentConfigName;
    const alarmsPolled = group.Properties?.AlarmConfiguration?.Enabled === true;
    if ((config === ALL_AT_ONCE) !== emergency || alarmsPolled === emergency) {
      disagreements.push(
        `group ${id} is ${config === ALL_AT_ONCE ? 'all at once' : String(config)} with alarms ${alarmsPolled ? 'polled' : 'ignored'}`,
      );
    }
  }
  const output = template.Outputs?.[RELEASE_KIND_OUTPUT]?.Value;
  if (output !== kind) disagreements.push(`output ${RELEASE_KIND_OUTPUT} is ${JSON.stringify(output) ?? 'missing'}`);
  return disagreements;
}

/** A release's name: the commit's UTC date and time, then the commit, so `ls` lists releases in commit order. */
function releaseName(commit: string, commitDate: Date): string {
  const stamp = commitDate.toISOString(); // 2026-11-25T16:52:34.000Z
  return `${stamp.slice(0, 10).replaceAll('-', '')}-${stamp.slice(11, 19).replaceAll(':', '')}-${commit.slice(0, SHA_LENGTH)}`;
}

function git(root: string, args: string[]): string {
  return execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
}

function packageVersion(root: string, name: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The CDK CLI's arguments that synthesize a release into `outdir`. An emergency release runs cdk.json's
 * `app` command with the app's emergency argument: nothing else on any machine can ask for one.
 */
export function synthArguments(outdir: string, emergency: boolean, app: string): string[] {
  return ['synth', '--quiet', '--output', outdir, ...(emergency ? ['--app', `${app} ${EMERGENCY_ARGUMENT}`] : [])];
}

/** The command that runs the app, from the checkout's cdk.json. */
function appCommand(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'cdk.json'), 'utf8')) as { app: string }).app;
}

/**
 * What the operator sees of one line the CDK CLI writes while it synthesizes: its bundling as the function's name,
 * nothing of its temporary output path or its hint to name a stack (the release prints its own), anything else as it is.
 */
export function translateCdkLine(line: string): string | undefined {
  const bundling = /^Bundling asset [^/]+\/(.+?)(?:\/Function)?\/Code\/Stage\.\.\.$/.exec(line);
  if (bundling) return `  bundling ${bundling[1]!.replace(/^Functions\//, '')}`;
  if (/^Successfully synthesized to |^Supply a stack id |^\s*$/.test(line)) return undefined;
  return line;
}

/** Runs the project's own CDK CLI as `npx cdk synth --quiet` would, into `outdir`. */
async function synthesize(root: string, outdir: string, emergency: boolean): Promise<void> {
  const child = spawn(join(root, 'node_modules', '.bin', 'cdk'), synthArguments(outdir, emergency, appCommand(root)), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Collected, so the CLI sees no terminal and checks no registry for a newer version; said outright too.
    env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true' },
  });
  // Its progress and warnings reach the operator as they come, in the release's words; all of it, as it was, on a failure.
  const said: string[] = [];
  const relay = (input: Readable) =>
    createInterface({ input }).on('line', (line) => {
      said.push(line);
      const shown = translateCdkLine(line);
      if (shown !== undefined) process.stderr.write(`${shown}\n`);
    });
  relay(child.stdout);
  relay(child.stderr);
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) {
    process.stderr.write(`What cdk synth said:\n${said.map((line) => `  ${line}\n`).join('')}`);
    throw new Refusal(`cdk synth failed (exit ${code ?? signal}); nothing was released.`);
  }
}

async function makeRelease(root: string, emergency: boolean): Promise<ReleaseManifest & { readonly seconds: string }> {
  const commit = git(root, ['rev-parse', 'HEAD']);
  if (git(root, ['status', '--porcelain']) !== '') {
    throw new Refusal(
      `the working tree has uncommitted or untracked changes (git status): a release named after ${commit.slice(0, SHA_LENGTH)} must be that commit. Commit or stash them first.`,
    );
  }
  const commitDate = new Date(git(root, ['show', '-s', '--format=%cI', 'HEAD']));
  const name = `${releaseName(commit, commitDate)}${emergency ? '-emergency' : ''}`;
  const releases = join(root, RELEASES_DIR);
  const target = join(releases, name);
  if (existsSync(target)) {
    throw new Refusal(
      `${RELEASES_DIR}/${name}/ exists already: this commit was released before. Deploy that one, or delete it by hand to synthesize it again.`,
    );
  }

  process.stdout.write(
    `Synthesizing ${commit} into ${RELEASES_DIR}/${name}/: cdk synth bundles every function, then checks the templates...\n`,
  );
  const started = performance.now();
  const madeReleases = mkdirSync(releases, { recursive: true }) !== undefined;
  // Synthesized beside its final place, then renamed: an interrupted synthesis never looks like a release.
  const partial = join(releases, `.${name}.partial-${process.pid}`);
  try {
    await synthesize(root, partial, emergency);
    const assembly = new CloudAssembly(partial);
    const disagreeing = assembly.stacks.flatMap((stack) => {
      const disagreements = templateDisagreements(stack.template as TemplateJson, emergency);
      return disagreements.length === 0 ? [] : [`${stack.stackName}: ${disagreements.join(', ')}`];
    });
    if (disagreeing.length > 0) {
      throw new Refusal(
        `the templates are not ${emergency ? 'an emergency' : 'an ordinary'} release, as ${RELEASE_MANIFEST} would say ` +
          `("emergency": ${emergency}): ${disagreeing.join('; ')}. Nothing was released.`,
      );
    }
    const manifest: ReleaseManifest = {
      name,
      commit,
      commitDate: commitDate.toISOString(),
      emergency,
      synthesizedAt: new Date().toISOString(),
      versions: {
        node: process.version,
        awsCdkCli: packageVersion(root, 'aws-cdk'),
        awsCdkLib: packageVersion(root, 'aws-cdk-lib'),
        esbuild: packageVersion(root, 'esbuild'),
      },
      stacks: assembly.stacks.map((stack) => ({
        stackName: stack.stackName,
        environment: `aws://${stack.environment.account}/${stack.environment.region}`,
        templateFile: stack.templateFile,
      })),
      // The app has one stack per stage (infra/animal-store-app.ts), in the stages' order.
      deploy: stages.map((stage) => `AWS_PROFILE=<${stage.name}> npx cdk deploy --app ${relative(root, target)} ${stage.stackName}`),
    };
    writeFileSync(join(partial, RELEASE_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    renameSync(partial, target);
    return { ...manifest, seconds: ((performance.now() - started) / 1000).toFixed(1) };
  } finally {
    rmSync(partial, { recursive: true, force: true });
    // A refusal leaves the tree as found: releases/ too, when this run made it and it holds nothing.
    if (madeReleases && readdirSync(releases).length === 0) rmdirSync(releases);
  }
}

/** Every release of the checkout, oldest commit first (a name begins with its commit's date), with what its manifest says. */
function listReleases(root: string): string[] {
  const releases = join(root, RELEASES_DIR);
  if (!existsSync(releases)) return [];
  return readdirSync(releases, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(join(releases, entry.name, RELEASE_MANIFEST)))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const manifest = JSON.parse(readFileSync(join(releases, name, RELEASE_MANIFEST), 'utf8')) as Partial<ReleaseManifest>;
      return `${name}  commit ${manifest.commit ?? '?'}  synthesized ${manifest.synthesizedAt ?? '?'}`;
    });
}

async function main(): Promise<void> {
  const { values: options } = parseCommandLine(
    { options: { list: { type: 'boolean' }, emergency: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } },
    usage,
  );
  // The checkout the command runs in: `npm run` runs it at the project's root.
  const root = git(process.cwd(), ['rev-parse', '--show-toplevel']);
  if (options.list) {
    for (const line of listReleases(root)) process.stdout.write(`${line}\n`);
    return;
  }
  const release = await makeRelease(root, options.emergency === true);
  const advice = release.emergency
    ? [
        'EMERGENCY release: every function moves at once and CodeDeploy ignores the alarms. Check the stack for stored',
        'rollback triggers first, then deploy it to the stage in trouble only (docs/operations.md, "While an alarm is in ALARM"):',
      ]
    : ['Deploy it, staging first, smoke-test, then production; to roll back later, deploy an earlier release the same way:'];
  process.stdout.write(
    [
      `Released commit ${release.commit} as ${RELEASES_DIR}/${release.name}/ (${release.stacks.map((stack) => stack.stackName).join(', ')}), synthesized and checked in ${release.seconds} s.`,
      ...advice,
      ...release.deploy.map((command) => `  ${command}`),
      ...(release.emergency ? [`Way back: ${WAY_BACK}.`] : []),
      '',
    ].join('\n'),
  );
}

// Run as `npm run release`; imported by tests, it only lends synthArguments, templateDisagreements and translateCdkLine.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  try {
    await main();
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    process.stderr.write(`Refusing to release: ${error.message}\n`);
    process.exitCode = 1;
  }
}
