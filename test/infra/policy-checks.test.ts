import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CfnResource, Validations, type App, type CfnElement } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import type { Construct } from 'constructs';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { createAnimalStoreApp, type AnimalStoreApp } from '../../infra/animal-store-app';
import { staging, stages } from '../../infra/stages';
import { routes } from '../../shared/facts/routes';
import { synthesizedApp } from '../helpers/synthesized-app';

// Rules and template checks do not look inside bundles: the apps this file changes skip bundling.
const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** The app with only the staging stack, plus whatever `extra` adds to it. */
function stagingApp(extra: (stack: Construct) => void = () => undefined): AnimalStoreApp {
  const outdir = mkdtempSync(join(tmpdir(), 'animal-store-policy-'));
  cleanups.push(() => rmSync(outdir, { recursive: true, force: true }));
  const built = createAnimalStoreApp({ outdir, context: SKIP_BUNDLING, stages: [staging] });
  extra(built.stacks.get(staging.name)!);
  return built;
}

function acknowledgementsIn(app: App): { path: string; id: string; reason: string }[] {
  return app.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, string>).map(([id, reason]) => ({
          path: construct.node.path,
          id: id.replace(/^Annotation::/, ''),
          reason,
        })),
      ),
  );
}

describe('policy checks', () => {
  it('find nothing unacknowledged in either stage with the AwsSolutions and Serverless packs', () => {
    const synthesis = synthesizedApp();
    expect(synthesis.stages.map((stage) => stage.config.name)).toEqual(stages.map((stage) => stage.name));
    for (const pack of [new AwsSolutionsChecks(synthesis.app), new ServerlessChecks(synthesis.app)]) {
      const report = pack.validateScope(synthesis.app);
      expect(report.violations, pack.name).toEqual([]);
      expect(report.success, pack.name).toBe(true);
    }
  });

  it('acknowledge only findings that do not apply, each with its concrete reason', () => {
    const { app, stacks } = stagingApp();
    const stack = stacks.get(staging.name)!;
    const acknowledged = acknowledgementsIn(app);
    // The API's (one per route, routeNotFound, the authorizer), the pre-traffic hook, the deployment traffic and the synthetic probe.
    const functions = routes.length + 2 + 3;
    const versionsOf = (fn: IFunction) => `AwsSolutions-IAM5[Resource::<${stack.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*]`;
    const counts: Record<string, number> = {};
    for (const { id } of acknowledged) counts[id] = (counts[id] ?? 0) + 1;
    expect(counts).toEqual({
      // Functions only API Gateway invokes, synchronously; the pre-traffic hook, which reports its own
      // failures to CodeDeploy; and the probe, whose failed run is its alarm: nothing to dead-letter.
      'Serverless-LambdaDLQ': functions,
      // HTTP APIs cannot trace; Lambda tracing would only add a wildcard grant. The hook logs every probe.
      'Serverless-LambdaTracing': functions,
      // The probe's scheduled ticks: one that failed is the alarm's missing run, nothing to redeliver.
      'Serverless-LambdaAsyncFailureDestination': 1,
      // The hook invokes each function's version being deployed, published during the deployment.
      ...Object.fromEntries(stack.functions.all.map((fn) => [versionsOf(fn.function), 1])),
      // CodeDeploy's role invokes the hooks before and after the shift: CDK grants it their qualified names too.
      [versionsOf(stack.preTrafficChecks.function)]: 1,
      [versionsOf(stack.deploymentTraffic.function)]: 1,
      // The hooks' CodeDeploy calls, which take no resource type: only "*" grants them.
      'AwsSolutions-IAM5[Resource::*]': 2,
      // The cursor key is resolved at deploy time: rotation is put-value-and-redeploy. The probe's
      // key is an API key an operator issues: Secrets Manager cannot mint one.
      'AwsSolutions-SMG4': 2,
      // CodeDeploy's role: AWS's own least-privilege policy for Lambda deployments.
      'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]': 1,
      // The alarm topic carries no customer data.
      'AwsSolutions-SNS2': 1,
    });
    for (const { path, id, reason } of acknowledged) expect(reason.length, `${path} ${id}`).toBeGreaterThan(80);
  });

  it('fail synthesis on an unacknowledged AwsSolutions finding', () => {
    const { app } = stagingApp((stack) => new Secret(stack, 'NeverRotated'));
    expect(() => app.synth()).toThrow(/AwsSolutions-SMG4/);
  });

  it('fail synthesis on an unacknowledged Serverless finding, even one the pack calls a warning', () => {
    const { app } = stagingApp((stack) => new LogGroup(stack, 'KeptForever', { retention: RetentionDays.INFINITE }));
    expect(() => app.synth()).toThrow(/Serverless-CloudWatchLogGroupRetentionPeriod/);
  });

  it('fail synthesis on a template CloudFormation would reject', () => {
    const { app } = stagingApp(
      (stack) => new CfnResource(stack, 'Misspelt', { type: 'AWS::SQS::Queue', properties: { VisibilityTimeoutSecond: 30 } }),
    );
    expect(() => app.synth()).toThrow(/CloudFormation Validate/);
  });

  it("run with cdk.json's context, as the CLI does, which makes CloudFormation validation findings errors", () => {
    const { context } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    expect(context['@aws-cdk/core:validateAgainstDefaultRules']).toBe(true);
    const { app } = stagingApp();
    for (const [key, value] of Object.entries(context)) expect(app.node.tryGetContext(key), key).toEqual(value);
  });
});
