import type { StageConfig } from '../../infra/stages';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { keepsUnshardedStatusIndex } from '../../shared/facts/listing';

/**
 * The pets table's indexes a stage deploys: the key design's two, and the unsharded status index until
 * the stage's migration is complete (docs/operations.md, "Sharding the listing indexes").
 */
export function petsIndexesOf(config: StageConfig) {
  const { allPetsIndex, byStatusIndex, unshardedByStatusIndex } = PETS_TABLE;
  return keepsUnshardedStatusIndex(config.listing.statusIndexMigration)
    ? [allPetsIndex, byStatusIndex, unshardedByStatusIndex]
    : [allPetsIndex, byStatusIndex];
}
