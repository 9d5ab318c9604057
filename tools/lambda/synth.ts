import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { createAnimalStoreApp, type AnimalStoreAppOptions } from '../../infra/animal-store-app';
import type { AnimalStoreStack } from '../../infra/animal-store-stack';
import type { StageConfig } from '../../infra/stages';

export interface SynthesizedStage {
  readonly config: StageConfig;
  readonly stack: AnimalStoreStack;
  readonly template: Template;
  /** The template as plain JSON, for lookups the assertions library has no helper for. */
  readonly json: CfnTemplate;
}

export interface Synthesis {
  readonly app: App;
  readonly outdir: string;
  readonly assembly: CloudAssembly;
  readonly stages: readonly SynthesizedStage[];
  stage(name: string): SynthesizedStage;
  dispose(): void;
}

export interface CfnResourceJson {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
  readonly Metadata?: Record<string, any>;
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResourceJson>;
  readonly Outputs?: Record<string, { Value: unknown }>;
}

export interface SynthesisOptions extends Omit<AnimalStoreAppOptions, 'outdir'> {
  /** The directory the temporary assembly directory is made in; the system's temporary directory by default. */
  readonly parentDir?: string;
}

/**
 * As `cdk synth` does (cdk.json's context, cdk-nag, bundling with the local esbuild), into a temporary directory.
 * Environment-agnostic by default, like an offline synth: that proves no stage needs an account, a region or a lookup.
 */
export function synthesize({ parentDir = tmpdir(), ...options }: SynthesisOptions = {}): Synthesis {
  const outdir = mkdtempSync(join(parentDir, 'animal-store-cdk-'));
  try {
    const { app, stacks } = createAnimalStoreApp({
      ...options,
      // What the CLI adds: the asset path on each function, and each resource's construct path.
      context: { 'aws:cdk:enable-asset-metadata': true, 'aws:cdk:enable-path-metadata': true, ...options.context },
      outdir,
    });
    const assembly = app.synth();
    const stages = [...stacks.values()].map((stack) => {
      const json = assembly.getStackByName(stack.stackName).template as CfnTemplate;
      return { config: stack.config, stack, json, template: Template.fromJSON(json) };
    });
    return {
      app,
      outdir,
      assembly,
      stages,
      stage(name) {
        const found = stages.find((stage) => stage.config.name === name);
        if (!found) throw new Error(`No stage ${name}`);
        return found;
      },
      dispose: () => rmSync(outdir, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(outdir, { recursive: true, force: true });
    throw error;
  }
}

/** Resources of a type, by logical id. */
export function resourcesOfType(json: CfnTemplate, type: string): Record<string, CfnResourceJson> {
  return Object.fromEntries(Object.entries(json.Resources).filter(([, resource]) => resource.Type === type));
}
