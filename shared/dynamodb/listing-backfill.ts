import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { listingAttributes, PETS_TABLE } from './pets-table';

/** Where a backfill's Scan stands: the key to continue after, or undefined at the start. */
export type ScanPosition = Record<string, unknown> | undefined;

/** What a backfill has done so far. */
export interface BackfillCounts {
  /** Items read. */
  readonly scanned: number;
  /** Items whose listing attributes were set. */
  readonly updated: number;
  /** Items that already carried the right listing attributes, left unwritten. */
  readonly alreadyRight: number;
  /** Items deleted between the Scan and their update: the condition refused to create them again. */
  readonly gone: number;
}

export interface BackfillOptions {
  /** The listing shards the items must be spread over: the stage's. */
  readonly shards: number;
  /** Where to start: a position a previous run reported; the table's start when omitted. */
  readonly from?: ScanPosition;
  /** Updates in flight at once. */
  readonly concurrency?: number;
  /** Items per Scan page; DynamoDB's 1 MB page when omitted. */
  readonly pageSize?: number;
  /** Stops before the next update once aborted; the page it was in is not reported done. */
  readonly signal?: AbortSignal;
  /** Stops after this many pages: a run cut short on purpose. */
  readonly maxPages?: number;
  /** Told after each page whose updates have all completed, with the position after it (undefined: the table is done). */
  readonly onPage?: (position: ScanPosition, counts: BackfillCounts) => Promise<void> | void;
}

export interface BackfillResult extends BackfillCounts {
  /** True when the Scan reached the table's end; false when stopped by the signal or the page limit. */
  readonly finished: boolean;
}

/** Updates in flight at once unless told: enough to keep a table busy, few enough for dynalite on a laptop. */
export const DEFAULT_BACKFILL_CONCURRENCY = 16;

/** Only what listingAttributes reads and what the item carries now: a Scan pays for what it returns. */
const PROJECTED = [
  PETS_TABLE.partitionKey,
  'status',
  'createdAt',
  PETS_TABLE.allPetsIndex.partitionKey,
  PETS_TABLE.allPetsIndex.sortKey,
  PETS_TABLE.byStatusIndex.partitionKey,
] as const;

/**
 * Gives every pet item the listing attributes of `shards` listing shards (listingAttributes), page by
 * page: items already right are not written, so a second run writes nothing; an update never creates
 * an item (attribute_exists), so a pet deleted meanwhile stays deleted. A page is reported through
 * onPage only once all its updates completed, so a run resumed from the last reported position misses none.
 */
export async function backfillListing(
  client: DynamoDBDocumentClient,
  tableName: string,
  options: BackfillOptions,
): Promise<BackfillResult> {
  const names = Object.fromEntries(PROJECTED.map((attribute, index) => [`#a${index}`, attribute]));
  let counts: BackfillCounts = { scanned: 0, updated: 0, alreadyRight: 0, gone: 0 };
  let position = options.from;
  for (let page = 0; options.maxPages === undefined || page < options.maxPages; page++) {
    if (options.signal?.aborted) return { ...counts, finished: false };
    const { Items = [], LastEvaluatedKey } = await client.send(
      new ScanCommand({
        TableName: tableName,
        ProjectionExpression: Object.keys(names).join(', '),
        ExpressionAttributeNames: names,
        ExclusiveStartKey: position,
        Limit: options.pageSize,
      }),
    );
    const stale = Items.flatMap((item) => {
      const change = differences(item, options.shards);
      return change === undefined ? [] : [{ key: item[PETS_TABLE.partitionKey], change }];
    });
    const outcomes = await updateAll(client, tableName, stale, options);
    if (outcomes.stopped) return { ...counts, finished: false };
    counts = {
      scanned: counts.scanned + Items.length,
      updated: counts.updated + outcomes.updated,
      alreadyRight: counts.alreadyRight + Items.length - stale.length,
      gone: counts.gone + outcomes.gone,
    };
    position = LastEvaluatedKey;
    await options.onPage?.(position, counts);
    if (position === undefined) return { ...counts, finished: true };
  }
  return { ...counts, finished: false };
}

/** The SET and REMOVE that make an item's listing attributes right. */
interface Change {
  readonly set: Record<string, string>;
  readonly remove: string[];
}

/** An item whose listing attributes are not right yet, by its key. */
interface StaleItem {
  readonly key: unknown;
  readonly change: Change;
}

/** The change that makes an item's listing attributes right, or undefined when they already are. */
function differences(item: Record<string, unknown>, shards: number): Change | undefined {
  const wanted: Record<string, string> = listingAttributes(item as { id: number; status?: string; createdAt: string }, shards);
  const set = Object.fromEntries(Object.entries(wanted).filter(([attribute, value]) => item[attribute] !== value));
  // A pet without a status carries no statusShard: it is absent from the sparse status index.
  const remove = [PETS_TABLE.byStatusIndex.partitionKey].filter((attribute) => !(attribute in wanted) && item[attribute] !== undefined);
  return Object.keys(set).length + remove.length === 0 ? undefined : { set, remove };
}

/** Updates the items, `concurrency` at a time; stops issuing them once the signal aborts. */
async function updateAll(
  client: DynamoDBDocumentClient,
  tableName: string,
  items: readonly StaleItem[],
  options: BackfillOptions,
): Promise<{ updated: number; gone: number; stopped: boolean }> {
  let next = 0;
  let updated = 0;
  let gone = 0;
  const worker = async () => {
    while (next < items.length && !options.signal?.aborted) {
      if (await updateOne(client, tableName, items[next++]!)) updated++;
      else gone++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency ?? DEFAULT_BACKFILL_CONCURRENCY, items.length) }, worker));
  return { updated, gone, stopped: options.signal?.aborted === true };
}

/** Sets one item's listing attributes; false when the item is gone. */
async function updateOne(client: DynamoDBDocumentClient, tableName: string, { key, change }: StaleItem): Promise<boolean> {
  const { set, remove } = change;
  const sets = Object.keys(set).map((attribute, index) => [`#s${index}`, attribute, `:s${index}`] as const);
  const removes = remove.map((attribute, index) => [`#r${index}`, attribute] as const);
  const clauses = [
    sets.length > 0 ? `SET ${sets.map(([name, , value]) => `${name} = ${value}`).join(', ')}` : '',
    removes.length > 0 ? `REMOVE ${removes.map(([name]) => name).join(', ')}` : '',
  ];
  try {
    await client.send(
      new UpdateCommand({
        TableName: tableName,
        Key: { [PETS_TABLE.partitionKey]: key },
        UpdateExpression: clauses.filter(Boolean).join(' '),
        ConditionExpression: 'attribute_exists(#id)',
        ExpressionAttributeNames: {
          '#id': PETS_TABLE.partitionKey,
          ...Object.fromEntries([...sets, ...removes].map(([name, attribute]) => [name, attribute])),
        },
        ...(sets.length > 0
          ? { ExpressionAttributeValues: Object.fromEntries(sets.map(([, attribute, value]) => [value, set[attribute]])) }
          : {}),
      }),
    );
    return true;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return false;
    throw error;
  }
}
