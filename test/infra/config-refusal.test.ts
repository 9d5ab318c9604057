import { App, SecretValue, Stack } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { BARE_FUNCTION_SETTINGS } from '../helpers/bare-function';
import { ApiFunction, type ApiFunctionProps, type LogLevel } from '../../infra/api-function';
import { staging, type StageConfig } from '../../infra/stages';
import { ENV } from '../../shared/facts/environment';
import { synthesize } from '../../tools/lambda/synth';
import { API_FUNCTIONS } from '../../shared/facts/function-names';

// What is checked is the environment, not the bundle: skip bundling to keep this file fast.
const NO_BUNDLING = { 'aws:cdk:bundling-stacks': [] };
/** What listPets reads besides its table and cursor secret. */
const LISTING = { [ENV.listingShards]: '8' };

/** Synthesizes one listPets ApiFunction on a bare stack; the error `cdk synth` would print, or undefined. */
function synthesisError(overrides: Partial<ApiFunctionProps> = {}): string | undefined {
  const app = new App({ context: NO_BUNDLING });
  new ApiFunction(new Stack(app, 'Bare'), 'ListPets', {
    name: 'listPets',
    stageValues: { ...LISTING, [ENV.petsTable]: 'pets', [ENV.cursorSecret]: 'a-cursor-secret-of-at-least-32-characters' },
    ...BARE_FUNCTION_SETTINGS,
    ...overrides,
  });
  try {
    app.synth();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

describe('synthesizing a function whose environment it would refuse at cold start', () => {
  it('synthesizes one whose environment its configuration accepts', () => {
    expect(synthesisError()).toBeUndefined();
  });

  it('fails, naming the function, the variable and the rule, for a cursor secret shorter than the minimum', () => {
    const error = synthesisError({ stageValues: { ...LISTING, [ENV.petsTable]: 'pets', [ENV.cursorSecret]: 'too-short' } });
    expect(error).toContain('Bare/ListPets/Function');
    expect(error).toContain('CURSOR_SECRET must be at least 32 characters');
  });

  it('fails for a variable the function reads that it is not given', () => {
    expect(synthesisError({ stageValues: { ...LISTING, [ENV.petsTable]: 'pets' } })).toMatch(
      /Bare\/ListPets\/Function.*CURSOR_SECRET is required/s,
    );
  });

  it('fails for a log level the functions do not know', () => {
    expect(synthesisError({ logLevel: 'VERBOSE' as LogLevel })).toContain('POWERTOOLS_LOG_LEVEL must be one of DEBUG, INFO');
  });

  it('leaves a value resolved at deploy time (a secret reference) to the function, which alone can read it', () => {
    const fromSecret = SecretValue.secretsManager('cursor-secret').unsafeUnwrap();
    expect(synthesisError({ stageValues: { ...LISTING, [ENV.petsTable]: 'pets', [ENV.cursorSecret]: fromSecret } })).toBeUndefined();
  });
});

describe('synthesizing a stage whose functions would refuse their configuration', () => {
  it('fails, naming each function and the variable', () => {
    const loud: StageConfig = { ...staging, name: 'loud', stackName: 'AnimalStore-Loud', logLevel: 'VERBOSE' as LogLevel };
    let message = '';
    try {
      synthesize({ stages: [loud], context: NO_BUNDLING }).dispose();
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    }
    for (const fn of API_FUNCTIONS) {
      expect(message).toMatch(new RegExp(`AnimalStore-Loud/Functions/${fn}/Function\\].*POWERTOOLS_LOG_LEVEL must be one of`));
    }
    expect(message).toMatch(/AnimalStore-Loud\/[\w/]*PreTraffic[\w/]*\].*POWERTOOLS_LOG_LEVEL must be one of/);
  });
});
