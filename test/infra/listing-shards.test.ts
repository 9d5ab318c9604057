import { describe, expect, it } from 'vitest';
import { production } from '../../infra/stages';
import { LISTING } from '../../shared/facts/listing';
import { ENV } from '../../shared/facts/environment';
import { synthesize } from '../../tools/lambda/synth';

// What is checked is the configuration, not the bundles: skip bundling to keep this file fast.
const context = { 'aws:cdk:bundling-stacks': [] };

/** The environment of each listing function of `production` synthesized with `listing`. */
function listingVariables(listing: typeof production.listing) {
  const synthesis = synthesize({ stages: [{ ...production, listing }], context });
  try {
    const { stack, json } = synthesis.stage(production.name);
    const variablesOf = (name: 'listPets' | 'createPet') => {
      const fn = stack.functions.of(name).function;
      return json.Resources[stack.getLogicalId(fn.node.defaultChild as never)]!.Properties!.Environment.Variables;
    };
    return { listPets: variablesOf('listPets')[ENV.listingShards], createPet: variablesOf('createPet')[ENV.writeShards] };
  } finally {
    synthesis.dispose();
  }
}

describe('a change of the listing shard count', () => {
  it("deploys a raise's first release: pages read the new count while creates keep to the old", () => {
    expect(listingVariables({ ...LISTING, shards: 8, writeShards: 4 })).toEqual({ listPets: '8', createPet: '4' });
  });

  it("refuses at synthesis creates into shards the stage's pages do not read, naming both counts", () => {
    expect(() => listingVariables({ ...LISTING, shards: 4, writeShards: 8 })).toThrow(
      /listing\.writeShards \(8\) of .* exceeds listing\.shards \(4\): listings would miss the pets created in the shards they do not read/,
    );
  });
});
