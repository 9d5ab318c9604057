import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { production, staging, type ListingConfig, type StageConfig } from '../../infra/stages';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { ENV } from '../../shared/facts/environment';
import { LISTING_SHARDS } from '../../shared/facts/listing';
import { resourcesOfType, synthesize, type Synthesis, type SynthesizedStage } from '../../tools/lambda/synth';

/**
 * The releases that move a stage deployed before sharding onto the sharded listing indexes
 * (docs/operations.md, "Sharding the listing indexes"), in order, at production's shard count; each is
 * one deploy of the same stage, and `npm run migrate` runs between the second and the third.
 */
const { shards } = production.listing;
const headCacheMs = production.listing.headCacheMs;
const ROLLOUT: ReadonlyArray<{ readonly step: string; readonly listing: ListingConfig }> = [
  { step: 'reading every shard', listing: { shards, writeShards: 1, statusIndexMigration: 'backfilling', headCacheMs } },
  { step: 'writing every shard', listing: { shards, statusIndexMigration: 'backfilling', headCacheMs } },
  { step: 'reading the sharded status index', listing: { shards, statusIndexMigration: 'reading-sharded', headCacheMs } },
  { step: 'complete', listing: { shards, statusIndexMigration: 'complete', headCacheMs } },
];
/** The design before sharding, as far as shards go: every pet written to, and read from, one partition. */
const BEFORE: Pick<ListingConfig, 'shards' | 'writeShards'> = { shards: 1, writeShards: 1 };
const PETS_TABLE_ID = 'PetsTable42325518';
const context = { 'aws:cdk:bundling-stacks': [] };

let syntheses: Synthesis[];
let steps: SynthesizedStage[];
beforeAll(() => {
  // Production alone: staging's stack is built by the same code from the same kind of settings.
  syntheses = ROLLOUT.map(({ listing }) => synthesize({ stages: [{ ...production, listing }], context }));
  steps = syntheses.map((synthesis) => synthesis.stage(production.name));
});
afterAll(() => {
  for (const synthesis of syntheses ?? []) synthesis.dispose();
});

interface IndexJson {
  readonly IndexName: string;
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

/** The index names a function's role may query. */
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

/** The shards a release's functions write to and read from, as its template gives them. */
function shardsOf(stage: SynthesizedStage): { readonly written: number; readonly read: number } {
  return {
    written: Number(variablesOf(stage, 'create-pet')[ENV.listingShards]),
    read: Number(variablesOf(stage, 'list-pets')[ENV.listingShards]),
  };
}

describe('moving a stage onto the sharded listing indexes, release by release', () => {
  it('is where both stages are now: the first release, or a later one', () => {
    for (const config of [staging, production]) {
      expect(ROLLOUT.map(({ listing }) => ({ ...listing, shards: config.listing.shards }))).toContainEqual(config.listing);
    }
  });

  it('goes from the design before sharding to the last release one index creation or deletion at a time', () => {
    const before = new Map(
      [PETS_TABLE.allPetsIndex, PETS_TABLE.unshardedByStatusIndex].map((index) => [index.name, indexesOf(steps[0]!).get(index.name)!]),
    );
    const path = [before, ...steps.map(indexesOf)];
    const changes = path.slice(1).map((after, step) => indexChanges(path[step]!, after));
    expect(changes).toEqual([[`create ${PETS_TABLE.byStatusIndex.name}`], [], [], [`delete ${PETS_TABLE.unshardedByStatusIndex.name}`]]);
  });

  it("keeps the design before sharding's two indexes unchanged, so pets written before it stay listed from the first release", () => {
    const first = indexesOf(steps[0]!);
    for (const index of [PETS_TABLE.allPetsIndex, PETS_TABLE.unshardedByStatusIndex]) {
      expect(JSON.parse(first.get(index.name)!)).toMatchObject({
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
      });
    }
  });

  it('never has a release create a pet in a shard the release before or after it does not list, since both serve during a canary', () => {
    const path = [{ written: BEFORE.writeShards!, read: BEFORE.shards }, ...steps.map(shardsOf)];
    for (let step = 1; step < path.length; step++) {
      const [older, newer] = [path[step - 1]!, path[step]!];
      // A pet's shard is its id modulo the shards written, so it is below that count.
      expect(Math.max(older.written, newer.written), ROLLOUT[step - 1]!.step).toBeLessThanOrEqual(Math.min(older.read, newer.read));
    }
    expect(path.at(-1)).toEqual({ written: shards, read: shards });
  });

  it('reads status listings from the unsharded index until the backfill has run, and from the sharded one after', () => {
    expect(steps.map((stage) => variablesOf(stage, 'list-pets')[ENV.statusListingIndex])).toEqual([
      'unsharded',
      'unsharded',
      'sharded',
      'sharded',
    ]);
  });

  it('lets listPets query exactly the indexes the table has at each release, and no other function query any', () => {
    for (const [step, stage] of steps.entries()) {
      expect(queriedIndexes(stage, 'list-pets').sort(), ROLLOUT[step]!.step).toEqual([...indexesOf(stage).keys()].sort());
      expect(queriedIndexes(stage, 'create-pet'), ROLLOUT[step]!.step).toEqual([]);
      expect(queriedIndexes(stage, 'get-pet'), ROLLOUT[step]!.step).toEqual([]);
    }
  });

  it("gives the head cache's bound to listPets only, and the shards to the functions that write or list pets alone", () => {
    const stage = steps.at(-1)!;
    expect(variablesOf(stage, 'list-pets')[ENV.listHeadCacheMs]).toBe(String(headCacheMs));
    expect(variablesOf(stage, 'create-pet')[ENV.listHeadCacheMs]).toBeUndefined();
    expect(variablesOf(stage, 'get-pet')[ENV.listingShards]).toBeUndefined();
  });
});

describe('a stage whose listing the functions would refuse', () => {
  const refusal = (listing: Partial<ListingConfig>): (() => void) => {
    const config: StageConfig = { ...staging, listing: { ...staging.listing, ...listing } };
    return () => synthesize({ stages: [config], context }).dispose();
  };

  it.each([
    ['no shard', { shards: 0, writeShards: 0 }, `${ENV.listingShards} must be at least ${LISTING_SHARDS.min}`],
    ['more shards than a page may read', { shards: LISTING_SHARDS.max + 1 }, `${ENV.listingShards} must be at most ${LISTING_SHARDS.max}`],
    ['a fractional shard count', { shards: 2.5 }, `${ENV.listingShards} must be a whole number`],
    ['a negative cache bound', { headCacheMs: -1 }, `${ENV.listHeadCacheMs} must be a whole number`],
  ])('fails synthesis for %s, naming the variable', (_, listing, message) => {
    expect(refusal(listing)).toThrow(message);
  });

  it('fails synthesis for creates written to more shards than listings read, which would leave pets unlisted', () => {
    expect(refusal({ shards: 4, writeShards: 8 })).toThrow(
      'listing.writeShards (8) of AnimalStore-Staging/Functions exceeds listing.shards (4)',
    );
  });
});
