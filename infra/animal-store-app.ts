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
 * The context key of an emergency release (`npm run release -- --emergency`, docs/operations.md, "While an
 * alarm is in ALARM"): every stack's functions then move all at once, with CodeDeploy ignoring the alarms.
 */
export const EMERGENCY_CONTEXT = 'emergency';

export interface AnimalStoreAppOptions {
  /** Where the cloud assembly goes; cdk.out (or the CLI's choice) by default. */
  readonly outdir?: string;
  /** The stages to build; all of infra/stages.ts by default. */
  readonly stages?: readonly StageConfig[];
  /** Extra context on top of cdk.json's, e.g. `aws:cdk:bundling-stacks` in tests. */
  readonly context?: Record<string, unknown>;
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
  const stacks = new Map<string, AnimalStoreStack>();
  const emergency = emergencyOf(app.node.tryGetContext(EMERGENCY_CONTEXT));
  for (const stage of options.stages ?? allStages) {
    stacks.set(stage.name, new AnimalStoreStack(app, stage.stackName, { stage, emergency }));
  }
  // Unacknowledged findings, warnings included, fail synthesis; acknowledgements sit next to the
  // resource they concern, each with its reason.
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
  return { app, stacks };
}

/** The emergency context as the CLI passes it (`-c emergency=true`, a string) or a test does (a boolean). */
function emergencyOf(value: unknown): boolean {
  if (value === undefined || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new Error(`The ${EMERGENCY_CONTEXT} context must be true or unset, not ${JSON.stringify(value)}.`);
}
