import { PETS_TABLE } from '../../shared/dynamodb/pets-table';

/** The pets table's indexes, the same on every stage: the key design's two. */
export const PETS_INDEXES = [PETS_TABLE.allPetsIndex, PETS_TABLE.byStatusIndex] as const;
