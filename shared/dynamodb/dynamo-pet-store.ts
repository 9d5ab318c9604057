import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putConditionally } from './conditional-put';
import { callStore } from './dynamodb-client';
import { readNewestFirst, type ListingPartition } from './newest-first';
import { petFieldsOf, type PetRecord, type PetStatus } from '../domain/pets/pet-schemas';
import type { InsertResult, ListPage, ListQuery, PetStore } from '../domain/pets/pet-store';
import { listingAttributes, listingShardKey, PETS_TABLE } from './pets-table';

export class DynamoPetStore implements PetStore {
  /**
   * @param shards the listing shards (shared/dynamodb/pets-table.ts) this function uses: those new pets
   * go to (createPet), or those every page reads (listPets).
   */
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly shards: number,
  ) {}

  async insert(pet: PetRecord, creationToken: string): Promise<InsertResult> {
    const put = await putConditionally(
      this.client,
      { [PETS_TABLE.partitionKey]: pet.id },
      {
        TableName: this.tableName,
        Item: toItem(pet, creationToken, this.shards),
        // Ids are spread at random, not counted: this condition is what makes one unique.
        ConditionExpression: 'attribute_not_exists(#id)',
        ExpressionAttributeNames: { '#id': PETS_TABLE.partitionKey },
      },
    );
    if (put.written) return { outcome: 'inserted' };
    // Our own earlier attempt or a collision: only the token stored with the item tells.
    const { current } = put;
    if (current !== undefined && current[PETS_TABLE.creationTokenAttribute] === creationToken) {
      return { outcome: 'exists', existing: toRecord(current) };
    }
    return { outcome: 'taken' };
  }

  async get(id: number): Promise<PetRecord | undefined> {
    const { Item } = await callStore(() =>
      this.client.send(new GetCommand({ TableName: this.tableName, Key: { [PETS_TABLE.partitionKey]: id } })),
    );
    return Item === undefined ? undefined : toRecord(Item);
  }

  async list({ status, limit, after }: ListQuery): Promise<ListPage> {
    const items = await readNewestFirst(this.client, this.tableName, {
      partitions: this.partitionsOf(status),
      sortKey: PETS_TABLE.allPetsIndex.sortKey,
      // One item beyond the page tells whether a next page exists, so the last page has no next link.
      wanted: limit + 1,
      before: after,
    });
    const pets = items.slice(0, limit);
    // The position of the page's last pet is its sort key: where the next page's queries start below.
    return items.length > limit
      ? { pets: pets.map(toRecord), next: pets.at(-1)![PETS_TABLE.allPetsIndex.sortKey] as string }
      : { pets: pets.map(toRecord) };
  }

  /** The index partitions a listing merges: every shard of its index. */
  private partitionsOf(status: PetStatus | undefined): ListingPartition[] {
    const index = status === undefined ? PETS_TABLE.allPetsIndex : PETS_TABLE.byStatusIndex;
    const base = status ?? PETS_TABLE.collection;
    return Array.from({ length: this.shards }, (_, shard) => ({
      indexName: index.name,
      partitionKey: index.partitionKey,
      value: listingShardKey(base, shard),
    }));
  }
}

/** A pet as the table stores it: the record, its index keys and the token of the request that wrote it. */
export function toItem(pet: PetRecord, creationToken: string, shards: number): Record<string, unknown> {
  return { ...pet, ...listingAttributes(pet, shards), [PETS_TABLE.creationTokenAttribute]: creationToken };
}

function toRecord(item: Record<string, unknown>): PetRecord {
  return { id: item.id as number, ...petFieldsOf(item), createdAt: item.createdAt as string };
}
