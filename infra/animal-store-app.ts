import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { AnimalStoreStack } from './animal-store-stack';
import { stages as allStages, type StageConfig } from './stages';

/** The `context` of cdk.json: feature flags, among them the one that makes CloudFormation validation fatal. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context?: Record<string, unknown> };
  return cdkJson.context ?? {};
}

/**
 * The app's one argument, which `npm run release -- --emergency` alone passes (docs/operations.md, "While an
 * alarm is in ALARM"): every stack's functions then move all at once, with CodeDeploy ignoring the alarms.
 * An argument, not context: the CDK CLI merges ~/.cdk.json's context into every synthesis, and no file can
 * add an argument to the app's command (cdk.json's `app` wins over ~/.cdk.json's), so a home file cannot
 * turn a plain release into an emergency one behind release.json's back.
 */
export const EMERGENCY_ARGUMENT = '--emergency';

/** The context key an emergency release might be looked for under: refused wherever it is set, so no context file decides. */
export const REFUSED_EMERGENCY_CONTEXT = 'emergency';

export interface AnimalStoreAppOptions {
  /** Where the cloud assembly goes; cdk.out (or the CLI's choice) by default. */
  readonly outdir?: string;
  /** The stages to build; all of infra/stages.ts by default. */
  readonly stages?: readonly StageConfig[];
  /** Extra context on top of cdk.json's, e.g. `aws:cdk:bundling-stacks` in tests. */
  readonly context?: Record<string, unknown>;
  /** An emergency release (EMERGENCY_ARGUMENT): all at once, alarms ignored. An ordinary one by default. */
  readonly emergency?: boolean;
}

export interface AnimalStoreApp {
  readonly app: App;
  readonly stacks: ReadonlyMap<string, AnimalStoreStack>;
}

/**
 * The CDK app: one stack per stage, checked by cdk-nag at synthesis. The CLI and the tests both build it
 * here with cdk.json's context, so the tests synthesize exactly what `cdk synth` does.
 */
export function createAnimalStoreApp(options: AnimalStoreAppOptions = {}): AnimalStoreApp {
  const app = new App({
    context: { ...cdkJsonContext(), ...options.context },
    ...(options.outdir === undefined ? {} : { outdir: options.outdir }),
  });
  if (app.node.tryGetContext(REFUSED_EMERGENCY_CONTEXT) !== undefined) {
    // The app sees the CLI's context merged: which file or argument set the key, it cannot tell.
    throw new Error(
      `The context key "${REFUSED_EMERGENCY_CONTEXT}" is set; remove it from ~/.cdk.json, cdk.json, cdk.context.json or --context, ` +
        `wherever it is. Context never makes an emergency release, so that release.json and the templates agree: ` +
        `npm run release -- ${EMERGENCY_ARGUMENT} does.`,
    );
  }
  const stacks = new Map<string, AnimalStoreStack>();
  for (const stage of options.stages ?? allStages) {
    stacks.set(stage.name, new AnimalStoreStack(app, stage.stackName, { stage, emergency: options.emergency === true }));
  }
  // Unacknowledged findings, warnings included, fail synthesis; acknowledgements sit next to the
  // resource they concern, each with its reason.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return { app, stacks };
}

/** Whether the app's command line (process.argv after the script) asks for an emergency release; any other argument is refused. */
export function emergencyOf(args: readonly string[]): boolean {
  if (args.length === 0) return false;
  if (args.length === 1 && args[0] === EMERGENCY_ARGUMENT) return true;
  throw new Error(`The app takes no argument but ${EMERGENCY_ARGUMENT} (npm run release -- ${EMERGENCY_ARGUMENT}), not: ${args.join(' ')}`);
}
