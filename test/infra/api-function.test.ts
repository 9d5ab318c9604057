import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { BARE_FUNCTION_SETTINGS } from '../helpers/bare-function';
import { ApiFunction } from '../../infra/api-function';
import { FUNCTION_TIMEOUT_MS } from '../../shared/facts/time-budget';
import { ENV } from '../../shared/facts/environment';
import { runtimeNode } from '../../tools/lambda/lambda-runner';

/**
 * One ApiFunction on a bare stack. With `bundle`, its handler is bundled as `cdk synth` does it; the
 * template does not depend on the bundle, so the tests that read nothing else skip bundling.
 */
function build(overrides: Partial<ConstructorParameters<typeof ApiFunction>[2]> = {}, { bundle = false } = {}) {
  // Asset metadata, as the CLI asks for: it names the directory of the bundle.
  const app = new App({
    context: { 'aws:cdk:enable-asset-metadata': true, ...(bundle ? {} : { 'aws:cdk:bundling-stacks': [] }) },
  });
  const stack = new Stack(app, 'Bare');
  const fn = new ApiFunction(stack, 'GetPet', {
    name: 'getPet',
    stageValues: { [ENV.petsTable]: 'pets' },
    ...BARE_FUNCTION_SETTINGS,
    ...overrides,
  });
  return { app, stack, fn, template: Template.fromStack(stack) };
}

/**
 * Imports a function's bundle in the runtime's Node as Lambda would, with the function's environment
 * from the template (NODE_OPTIONS included) and nothing inherited, and says whether Node then holds
 * the bundle's source map: whether the cold start read and parsed it.
 */
function loadsSourceMapAtColdStart({ app, template }: ReturnType<typeof build>, extra: Record<string, string> = {}): boolean {
  const [resource] = Object.values(template.findResources('AWS::Lambda::Function'));
  const bundle = join(app.outdir, resource!.Metadata['aws:asset:path'], 'index.js');
  const probe = [
    "const { findSourceMap } = require('node:module');",
    // Required, as Lambda's runtime loads a .js handler file.
    'require(process.argv[1]);',
    "process.stdout.write('\\nsource map loaded: ' + String(findSourceMap(process.argv[1]) !== undefined));",
  ].join('\n');
  const output = execFileSync(runtimeNode(), ['-e', probe, bundle], {
    env: { PATH: process.env.PATH, AWS_REGION: 'eu-west-1', ...resource!.Properties.Environment.Variables, ...extra },
    encoding: 'utf8',
  });
  return /source map loaded: true$/.test(output);
}

describe('the ApiFunction construct', () => {
  it('runs its handler on Node.js 24, arm64, with its memory, the time budget and its environment beside the logging variables', () => {
    build().template.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      MemorySize: 512,
      Timeout: FUNCTION_TIMEOUT_MS / 1000,
      Environment: {
        Variables: { [ENV.petsTable]: 'pets', [ENV.logLevel]: 'INFO', [ENV.metricsNamespace]: 'AnimalStore/test' },
      },
      LoggingConfig: Match.objectLike({ LogFormat: 'JSON', ApplicationLogLevel: 'INFO' }),
    });
  });

  it('does not read its source map at cold start, which Node would with source maps on', () => {
    const built = build({}, { bundle: true });
    expect(loadsSourceMapAtColdStart(built)).toBe(false);
    // The probe sees a map Node did read: the same bundle with source maps turned on.
    expect(loadsSourceMapAtColdStart(built, { NODE_OPTIONS: '--enable-source-maps' })).toBe(true);
  });

  it('writes to its own log group only, kept as long as it is told', () => {
    const { template } = build({ logRetention: RetentionDays.ONE_WEEK });
    template.hasResourceProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
    const [policy] = Object.values(template.findResources('AWS::IAM::Policy'));
    const statements = policy!.Properties.PolicyDocument.Statement as Array<{ Action: unknown; Resource: unknown }>;
    expect(statements).toHaveLength(1);
    expect(statements[0]!.Action).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
    expect(JSON.stringify(statements[0]!.Resource)).toContain('GetPetLogs');
  });

  it('reserves concurrency only when asked to', () => {
    const [unreserved] = Object.values(build().template.findResources('AWS::Lambda::Function'));
    expect(unreserved!.Properties.ReservedConcurrentExecutions).toBeUndefined();
    build({ reservedConcurrency: 5 }).template.hasResourceProperties('AWS::Lambda::Function', { ReservedConcurrentExecutions: 5 });
  });

  it('is invoked through its live alias, so a new version takes traffic only when promoted', () => {
    build().template.hasResourceProperties('AWS::Lambda::Alias', { Name: 'live' });
  });
});
