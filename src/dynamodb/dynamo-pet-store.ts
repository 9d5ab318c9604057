import { GetCommand, QueryCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { putConditionally } from './conditional-put';
import { callStore } from './dynamodb-client';
import { petFieldsOf, type PetRecord } from '../domain/pets/pet-schemas';
import type { InsertResult, ListPage, ListQuery, PetStore } from '../domain/pets/pet-store';
import { createdKey, PETS_TABLE } from './pets-table';

export class DynamoPetStore implements PetStore {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async insert(pet: PetRecord, creationToken: string): Promise<InsertResult> {
    const put = await putConditionally(
      this.client,
      { [PETS_TABLE.partitionKey]: pet.id },
      {
        TableName: this.tableName,
        Item: toItem(pet, creationToken),
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
    const index = status === undefined ? PETS_TABLE.allPetsIndex : PETS_TABLE.byStatusIndex;
    const partition = status ?? PETS_TABLE.collection;
    const { Items = [] } = await callStore(() =>
      this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          IndexName: index.name,
          KeyConditionExpression: '#partition = :partition',
          ExpressionAttributeNames: { '#partition': index.partitionKey },
          ExpressionAttributeValues: { ':partition': partition },
          ScanIndexForward: false,
          // One item beyond the page tells whether a next page exists, so the last page has no next link.
          Limit: limit + 1,
          ExclusiveStartKey:
            after === undefined
              ? undefined
              : {
                  [PETS_TABLE.partitionKey]: after.id,
                  [index.partitionKey]: partition,
                  [index.sortKey]: createdKey(after.createdAt, after.id),
                },
        }),
      ),
    );
    return { pets: Items.slice(0, limit).map(toRecord), hasMore: Items.length > limit };
  }
}

/** A pet as the table stores it: the record, its index keys and the token of the request that wrote it. */
export function toItem(pet: PetRecord, creationToken: string): Record<string, unknown> {
  return {
    ...pet,
    collection: PETS_TABLE.collection,
    createdKey: createdKey(pet.createdAt, pet.id),
    [PETS_TABLE.creationTokenAttribute]: creationToken,
  };
}

function toRecord(item: Record<string, unknown>): PetRecord {
  return { id: item.id as number, ...petFieldsOf(item), createdAt: item.createdAt as string };
}
