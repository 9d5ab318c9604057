import { beforeAll, describe, expect, it } from 'vitest';
import { PLACEHOLDER_ACCOUNTS } from '../../infra/placeholders';
import { production, type StageConfig } from '../../infra/stages';
import { synthesize } from '../../tools/lambda/synth';

// What is checked is the stage's configuration, not the bundles: skip bundling to keep this file fast.
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
/** An account that is none of the placeholders: where a stage would really deploy. */
const REAL_ACCOUNT = '123456789012';

/** Production as committed, example values and all, deploying to a real account. */
const deployed: StageConfig = { ...production, account: REAL_ACCOUNT };
/** The same stage with every example replaced by a value of its own. */
const filledIn: StageConfig = {
  ...deployed,
  domain: { domainName: 'api.pets.acme.io', hostedZone: { hostedZoneId: 'Z1D633PJN98FT9', zoneName: 'pets.acme.io' } },
  alarmSubscriptions: [{ email: 'oncall@acme.io' }, { topicArn: `arn:aws:sns:eu-west-1:${REAL_ACCOUNT}:ops-pager` }],
};

/** The error `cdk synth` would print for the stage, or undefined when it synthesizes. */
function synthesisError(stage: StageConfig): string | undefined {
  try {
    synthesize({ stages: [stage], context: NO_BUNDLING }).dispose();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The fields of infra/stages.ts the error refuses, one per line it prints. */
function refusedFields(error: string | undefined): string[] {
  return [...(error ?? '').matchAll(/^\s*\[[^\]]+\] (\S+) in infra\/stages\.ts is the example /gm)].map((match) => match[1]!);
}

describe('synthesizing a stage for a real account that still carries the example values', () => {
  let error: string | undefined;
  beforeAll(() => {
    error = synthesisError(deployed);
  });

  it('refuses the example domain name, which no certificate could be validated for, saying what to put there', () => {
    expect(error).toMatch(
      /production\.domain\.domainName in infra\/stages\.ts is the example "api\.animal-store\.example", but the stage deploys to account 123456789012: .*certificate would never validate.*Put the host your clients call there/,
    );
  });

  it('refuses the example hosted zone id, saying where to find the real one', () => {
    expect(error).toMatch(
      /production\.domain\.hostedZone\.hostedZoneId in infra\/stages\.ts is the example "Z0123456789EXAMPLE".*Put the id of the public hosted zone holding the domain there \(aws route53 list-hosted-zones\)/,
    );
  });

  it('refuses the example hosted zone name', () => {
    expect(error).toMatch(
      /production\.domain\.hostedZone\.zoneName in infra\/stages\.ts is the example "animal-store\.example".*Put the name of the public hosted zone holding the domain there/,
    );
  });

  it('refuses an alarm e-mail nobody reads, offering an address or a topic instead', () => {
    expect(error).toMatch(
      /production\.alarmSubscriptions\[0\]\.email in infra\/stages\.ts is the example "animal-store-oncall@example\.com".*alarms would reach nobody\. Put the on-call address there, or an existing SNS topic/,
    );
  });

  it('prints each problem once, on a line of its own, all in one run', () => {
    expect(refusedFields(error)).toEqual([
      'production.domain.domainName',
      'production.domain.hostedZone.hostedZoneId',
      'production.domain.hostedZone.zoneName',
      'production.alarmSubscriptions[0].email',
    ]);
  });
});

describe('synthesizing a stage for a real account once its values are its own', () => {
  it('synthesizes with a real domain, hosted zone and on-call address', () => {
    expect(synthesisError(filledIn)).toBeUndefined();
  });

  it('refuses only the fields still holding an example, naming which subscription', () => {
    const halfDone: StageConfig = {
      ...filledIn,
      domain: { ...filledIn.domain!, hostedZone: { ...filledIn.domain!.hostedZone!, hostedZoneId: 'Z0123456789EXAMPLE' } },
      alarmSubscriptions: [...filledIn.alarmSubscriptions, { email: 'pager@example.org' }],
    };
    expect(refusedFields(synthesisError(halfDone))).toEqual([
      'production.domain.hostedZone.hostedZoneId',
      `production.alarmSubscriptions[${filledIn.alarmSubscriptions.length}].email`,
    ]);
  });
});

describe('synthesizing the committed production stage, at its placeholder account', () => {
  it('accepts its example values, which never deploy from there', () => {
    expect(PLACEHOLDER_ACCOUNTS).toContain(production.account);
    expect(synthesisError(production)).toBeUndefined();
  });
});
