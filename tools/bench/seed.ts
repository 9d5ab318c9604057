import { randomUUID } from 'node:crypto';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { writeInBatches } from '../../local/dynamodb-local';
import { LISTING } from '../../shared/facts/listing';
import { toItem } from '../../shared/dynamodb/dynamo-pet-store';
import { PET_STATUSES, type PetRecord } from '../../shared/domain/pets/pet-schemas';
import { iterationPetId } from './bench-events';

const PARALLEL_BATCHES = 8;

/** Iteration pets were created before any seeded one (seeding counts back from now), so no listing's head changes. */
const ITERATION_PETS_CREATED_FROM = Date.parse('2000-01-01T00:00:00.000Z');

/**
 * Stores the pet each iteration's request names (bench-events.ts, iterationPetId), as the store writes it: the same
 * pet whenever the same index is stored again, so a request served twice on it (a function, then its floor) meets the same pet.
 */
export async function storeIterationPets(client: DynamoDBDocumentClient, tableName: string, indices: readonly number[]): Promise<void> {
  const puts = indices.map((index) => {
    const id = iterationPetId(index);
    const pet: PetRecord = {
      id,
      name: `Bench pet ${id}`,
      categoryId: 1,
      createdAt: new Date(ITERATION_PETS_CREATED_FROM + index * 1000).toISOString(),
      status: 'available',
    };
    return { PutRequest: { Item: toItem(pet, `iteration-${index}`, LISTING.shards) } };
  });
  await writeInBatches(client, tableName, puts, PARALLEL_BATCHES);
}

/**
 * Written as the store writes them, so the indexes hold them as real pets: one creation a second back to `newestAt`,
 * returned oldest first. Ids count up from `firstId`, so repeated seeding never collides.
 */
export async function seedPets(
  client: DynamoDBDocumentClient,
  tableName: string,
  count: number,
  firstId: number,
  newestAt: number = Date.now(),
): Promise<PetRecord[]> {
  const pets: PetRecord[] = Array.from({ length: count }, (_, index) => {
    // Statuses in turn, every fifth pet without: periods of 3 and 5 share no factor with a shard count
    // of 1, 2, 4, 8 or 16, so the pets of one status spread over every listing shard (ids count up).
    const status = index % 5 === 4 ? undefined : PET_STATUSES[index % PET_STATUSES.length];
    return {
      id: firstId + index,
      name: `Bench pet ${firstId + index}`,
      categoryId: 1 + (index % 7),
      createdAt: new Date(newestAt - (count - 1 - index) * 1000).toISOString(),
      ...(status === undefined ? {} : { status }),
    };
  });
  const puts = pets.map((pet) => ({ PutRequest: { Item: toItem(pet, randomUUID(), LISTING.shards) } }));
  await writeInBatches(client, tableName, puts, PARALLEL_BATCHES);
  return pets;
}
