import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { production, staging, type StageConfig, type StatusIndexMigration } from '../../infra/stages';
import { PETS_TABLE } from '../../src/dynamodb/pets-table';
import { ENV } from '../../src/facts/environment';
import { LISTING_SHARDS } from '../../src/facts/listing';
import { resourcesOfType, synthesize, type Synthesis, type SynthesizedStage } from '../../tools/lambda/synth';

/**
 * The steps of moving a stage's status listings onto the sharded index (docs/operations.md, "Sharding the
 * listing indexes"), each one release of the same stage, synthesized in order. CloudFormation creates or
 * deletes one global secondary index per update of a table, so two neighbouring steps may differ by one.
 */
const STEPS: readonly StatusIndexMigration[] = ['backfilling', 'reading-sharded', 'complete'];
const PETS_TABLE_ID = 'PetsTable42325518';
const context = { 'aws:cdk:bundling-stacks': [] };

const atStep = (config: StageConfig, step: StatusIndexMigration): StageConfig => ({
  ...config,
  listing: { ...config.listing, statusIndexMigration: step },
});

let synthesesByStep: Map<StatusIndexMigration, Synthesis>;
beforeAll(() => {
  synthesesByStep = new Map(STEPS.map((step) => [step, synthesize({ stages: [atStep(production, step)], context })]));
});
afterAll(() => {
  for (const synthesis of synthesesByStep?.values() ?? []) synthesis.dispose();
});

interface IndexJson {
  readonly IndexName: string;
  readonly KeySchema: unknown;
  readonly Projection: unknown;
}

function indexesOf(stage: SynthesizedStage): Map<string, string> {
  const table = stage.json.Resources[PETS_TABLE_ID]!.Properties!;
  return new Map((table.GlobalSecondaryIndexes as IndexJson[]).map((index) => [index.IndexName, JSON.stringify(index)]));
}

/** The index creations and deletions CloudFormation would make to go from `before` to `after`; a changed index counts twice. */
function indexChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const changes: string[] = [];
  for (const [name, json] of before) if (after.get(name) !== json) changes.push(`delete ${name}`);
  for (const [name, json] of after) if (before.get(name) !== json) changes.push(`create ${name}`);
  return changes;
}

function variablesOf(stage: SynthesizedStage, handler: string): Record<string, string | undefined> {
  const fn = stage.stack.functions.routes.get(handler)!.function;
  return stage.json.Resources[stage.stack.getLogicalId(fn.node.defaultChild as CfnElement)]!.Properties!.Environment.Variables;
}

/** The index ARNs' index names a function's role may query. */
function queriedIndexes(stage: SynthesizedStage, handler: string): string[] {
  const role = stage.stack.getLogicalId(stage.stack.functions.routes.get(handler)!.role.node.defaultChild as CfnElement);
  const statements = Object.values(resourcesOfType(stage.json, 'AWS::IAM::Policy'))
    .filter((policy) => JSON.stringify(policy.Properties!.Roles).includes(role))
    .flatMap((policy) => policy.Properties!.PolicyDocument.Statement as Array<{ Action: string; Resource: unknown }>)
    .filter((statement) => statement.Action === 'dynamodb:Query');
  return statements
    .flatMap((statement) => JSON.stringify(statement.Resource).match(/\/index\/[a-z-]+/g) ?? [])
    .map((path) => path.slice(7));
}

// Production alone: staging's stack is built by the same code from the same kind of settings.
describe.each([production])('the $name stage, step by step onto the sharded status index', (config) => {
  const stageAt = (step: StatusIndexMigration) => synthesesByStep.get(step)!.stage(config.name);

  it('goes from the design before sharding to the last step one index creation or deletion at a time', () => {
    const before = new Map(
      [PETS_TABLE.allPetsIndex, PETS_TABLE.unshardedByStatusIndex].map((index) => [
        index.name,
        indexesOf(stageAt('backfilling')).get(index.name)!,
      ]),
    );
    const path = [before, ...STEPS.map((step) => indexesOf(stageAt(step)))];
    const changes = path.slice(1).map((after, step) => indexChanges(path[step]!, after));
    expect(changes).toEqual([[`create ${PETS_TABLE.byStatusIndex.name}`], [], [`delete ${PETS_TABLE.unshardedByStatusIndex.name}`]]);
  });

  it("keeps the design before sharding's two indexes unchanged, so pets written before it stay listed from the first step", () => {
    const unsharded = indexesOf(stageAt('backfilling'));
    for (const index of [PETS_TABLE.allPetsIndex, PETS_TABLE.unshardedByStatusIndex]) {
      expect(JSON.parse(unsharded.get(index.name)!)).toMatchObject({
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
      });
    }
  });

  it('reads status listings from the unsharded index only while the backfill runs, and from the sharded one after', () => {
    expect(STEPS.map((step) => variablesOf(stageAt(step), 'list-pets')[ENV.statusListingIndex])).toEqual([
      'unsharded',
      'sharded',
      'sharded',
    ]);
  });

  it('lets listPets query exactly the indexes the table has at each step, and no other function query any', () => {
    for (const step of STEPS) {
      const stage = stageAt(step);
      expect(queriedIndexes(stage, 'list-pets').sort(), step).toEqual([...indexesOf(stage).keys()].sort());
      expect(queriedIndexes(stage, 'create-pet'), step).toEqual([]);
      expect(queriedIndexes(stage, 'get-pet'), step).toEqual([]);
    }
  });

  it("gives the stage's shard count to the functions that write or list pets, and the head cache's bound to listPets only", () => {
    const stage = stageAt('complete');
    const shards = String(config.listing.shards);
    expect(variablesOf(stage, 'create-pet')).toMatchObject({ [ENV.listingShards]: shards });
    expect(variablesOf(stage, 'list-pets')).toMatchObject({
      [ENV.listingShards]: shards,
      [ENV.listHeadCacheMs]: String(config.listing.headCacheMs),
    });
    expect(variablesOf(stage, 'get-pet')[ENV.listingShards]).toBeUndefined();
    expect(variablesOf(stage, 'create-pet')[ENV.listHeadCacheMs]).toBeUndefined();
  });
});

describe('a stage whose listing the functions would refuse', () => {
  it.each([
    ['no shard', { shards: 0 }, `${ENV.listingShards} must be at least ${LISTING_SHARDS.min}`],
    ['more shards than a page may read', { shards: LISTING_SHARDS.max + 1 }, `${ENV.listingShards} must be at most ${LISTING_SHARDS.max}`],
    ['a fractional shard count', { shards: 2.5 }, `${ENV.listingShards} must be a whole number`],
    ['a negative cache bound', { headCacheMs: -1 }, `${ENV.listHeadCacheMs} must be a whole number`],
  ])('fails synthesis for %s, naming the function and the variable', (_, listing, message) => {
    const config = { ...staging, listing: { ...staging.listing, ...listing } };
    expect(() => synthesize({ stages: [config], context }).dispose()).toThrow(message);
  });
});
