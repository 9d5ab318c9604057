import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { ApiFunction } from '../../infra/api-function';
import { FUNCTION_TIMEOUT_MS } from '../../src/facts/time-budget';
import { ENV } from '../../src/facts/environment';

/** One ApiFunction on a bare stack (it bundles the handler once, as `cdk synth` does). */
function build(overrides: Partial<ConstructorParameters<typeof ApiFunction>[2]> = {}) {
  const stack = new Stack(new App(), 'Bare');
  const fn = new ApiFunction(stack, 'GetPet', {
    handler: 'get-pet',
    environment: { [ENV.petsTable]: 'pets' },
    memoryMiB: 512,
    logLevel: 'INFO',
    metricsNamespace: 'AnimalStore/test',
    logRetention: RetentionDays.ONE_MONTH,
    removalPolicy: RemovalPolicy.RETAIN,
    ...overrides,
  });
  return { stack, fn, template: Template.fromStack(stack) };
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

  it('does not load source maps at cold start', () => {
    const [fn] = Object.values(build().template.findResources('AWS::Lambda::Function'));
    expect(JSON.stringify(fn!.Properties.Environment.Variables)).not.toContain('enable-source-maps');
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
