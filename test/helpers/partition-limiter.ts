import type { AttributeValue, TableDescription } from '@aws-sdk/client-dynamodb';

/**
 * DynamoDB's per-partition throughput, emulated for the fault proxy (./fault-proxy.ts `limitPartitions`):
 * a token bucket per partition-key value of a table and of each of its global secondary indexes, one
 * for writes and one for reads, refilled continuously at the scaled rate and holding at most one
 * second's worth (DynamoDB's burst capacity is not emulated: a test then predicts throughput from the
 * rate alone, give or take that one second).
 *
 * What is charged, and the simplifications:
 * - PutItem: ceil(item bytes / 1 KB) write units on the item's base partition and on the partition of
 *   every index whose key attributes the item has (index keys from DescribeTable). An index write
 *   that would throttle throttles the whole request: nothing is forwarded, nothing written. An admitted
 *   write is charged whether or not it then succeeds (DynamoDB charges a failed condition too).
 * - UpdateItem, DeleteItem: one write unit on the base partition of the request's Key; the item
 *   (its size, its index keys) is not known before the write, so indexes are not charged.
 * - GetItem, Query: admitted while the partition's read bucket holds the smallest read's units (half a
 *   unit, one if strongly consistent); charged once answered, as
 *   DynamoDB reports consumed capacity: the answer's ConsumedCapacity when the request asked for it,
 *   else estimated from the returned items (ceil(bytes / 4 KB), at least one, halved unless strongly
 *   consistent). Items a filter dropped are not seen, so a filtered Query is undercharged. The bucket
 *   may then go below empty: later reads wait until it refills.
 * - Other operations (Scan, batches, transactions) pass uncharged.
 */

/** DynamoDB's per-partition throughput, scaled: each bucket refills at `units × scale` per second. */
export interface PartitionLimits {
  /** Write units per second per partition-key value, before scaling (DynamoDB documents 1,000). */
  readonly writeUnitsPerSecond: number;
  /** Read units per second per partition-key value, before scaling (DynamoDB documents 3,000). */
  readonly readUnitsPerSecond: number;
  /** The factor applied to both, e.g. 1/50, so that a local API on 2 cores can exceed them. */
  readonly scale: number;
}

/** One partition: a partition-key value of a table or of one of its global secondary indexes. */
export interface PartitionOf {
  readonly table: string;
  /** The index's name; absent for the base table. */
  readonly index?: string;
  /** The partition-key value as DynamoDB's JSON carries it (a number's digits, a string's characters). */
  readonly value: string;
}

/** How many requests one partition's emulated limit throttled. */
export interface PartitionThrottles extends PartitionOf {
  readonly throttled: number;
}

/** The key attributes of a table and of its global secondary indexes. */
export interface TableKeys {
  readonly partitionKey: string;
  readonly indexes: readonly { readonly name: string; readonly partitionKey: string; readonly sortKey?: string }[];
}

/** What the limiter says of a request: throttled by a partition, or let through with what to charge once answered. */
export interface Admission {
  readonly throttledBy?: PartitionOf;
  /** For a read: charges its units, given DynamoDB's answer (a 200's body). */
  readonly charge?: (answer: Buffer) => void;
}

export interface PartitionLimiter {
  /** Decides a request, charging a write at once; undefined when the request is not limited. */
  admit(operation: string, body: Buffer): Promise<Admission | undefined>;
}

const WRITE_UNIT_BYTES = 1024;
const READ_UNIT_BYTES = 4096;

/** The key attributes DescribeTable reports. */
export function tableKeys(table: TableDescription): TableKeys {
  const hash = (schema: TableDescription['KeySchema']) => schema?.find((key) => key.KeyType === 'HASH')?.AttributeName ?? '';
  const range = (schema: TableDescription['KeySchema']) => schema?.find((key) => key.KeyType === 'RANGE')?.AttributeName;
  return {
    partitionKey: hash(table.KeySchema),
    indexes: (table.GlobalSecondaryIndexes ?? []).map((index) => {
      const sortKey = range(index.KeySchema);
      return { name: index.IndexName ?? '', partitionKey: hash(index.KeySchema), ...(sortKey === undefined ? {} : { sortKey }) };
    }),
  };
}

/** A token bucket refilled continuously at `rate` per second, holding at most one second's worth; it starts full. */
class TokenBucket {
  private tokens: number;
  private at = performance.now();
  constructor(private readonly rate: number) {
    this.tokens = rate;
  }
  /** The tokens now held (below zero while a read's charge is being paid off). */
  held(): number {
    const now = performance.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
    return this.tokens;
  }
  /** Whether `units` can be taken now; more than the bucket ever holds can be taken once it is full. */
  covers(units: number): boolean {
    return this.held() >= Math.min(units, this.rate);
  }
  take(units: number): void {
    this.held();
    this.tokens -= units;
  }
}

/** The subset of a DynamoDB request body the limiter reads. */
interface RequestBody {
  readonly TableName?: string;
  readonly IndexName?: string;
  readonly Item?: Record<string, AttributeValue>;
  readonly Key?: Record<string, AttributeValue>;
  readonly KeyConditionExpression?: string;
  readonly KeyConditions?: Record<string, { AttributeValueList?: AttributeValue[] }>;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, AttributeValue>;
  readonly ConsistentRead?: boolean;
  readonly ReturnConsumedCapacity?: string;
}

/**
 * A limiter enforcing `limits`; `keysOf` gives a table's key attributes (undefined: not limited),
 * `onThrottle` counts each throttled request against the partition that refused it.
 */
export function partitionLimiter(
  limits: PartitionLimits,
  keysOf: (table: string) => Promise<TableKeys | undefined>,
  onThrottle: (partition: PartitionOf) => void,
): PartitionLimiter {
  const buckets = new Map<string, TokenBucket>();
  function bucket(kind: 'read' | 'write', partition: PartitionOf): TokenBucket {
    const key = JSON.stringify([kind, partition.table, partition.index ?? '', partition.value]);
    let found = buckets.get(key);
    if (found === undefined) {
      found = new TokenBucket((kind === 'read' ? limits.readUnitsPerSecond : limits.writeUnitsPerSecond) * limits.scale);
      buckets.set(key, found);
    }
    return found;
  }
  function throttled(partition: PartitionOf): Admission {
    onThrottle(partition);
    return { throttledBy: partition };
  }

  function admitWrite(partitions: PartitionOf[], units: number): Admission {
    const refusing = partitions.find((partition) => !bucket('write', partition).covers(units));
    if (refusing !== undefined) return throttled(refusing);
    for (const partition of partitions) bucket('write', partition).take(units);
    return {};
  }

  function admitRead(partition: PartitionOf, request: RequestBody, answerItems: (answer: Record<string, unknown>) => unknown[]): Admission {
    const reads = bucket('read', partition);
    // Empty means below the smallest read's units: a continuously refilled bucket is never exactly empty.
    if (!reads.covers(request.ConsistentRead === true ? 1 : 0.5)) return throttled(partition);
    return {
      charge(answer) {
        reads.take(readUnits(request, parseObject(answer) ?? {}, answerItems));
      },
    };
  }

  return {
    async admit(operation, body) {
      const request = parseObject(body) as RequestBody | undefined;
      const table = request?.TableName;
      if (request === undefined || typeof table !== 'string') return undefined;
      if (!['PutItem', 'UpdateItem', 'DeleteItem', 'GetItem', 'Query'].includes(operation)) return undefined;
      const keys = await keysOf(table);
      if (keys === undefined) return undefined;
      switch (operation) {
        case 'PutItem': {
          const item = request.Item ?? {};
          const base = keyValue(item[keys.partitionKey]);
          if (base === undefined) return undefined;
          const indexed = keys.indexes.flatMap((index) => {
            const value = keyValue(item[index.partitionKey]);
            const inIndex = value !== undefined && (index.sortKey === undefined || item[index.sortKey] !== undefined);
            return inIndex ? [{ table, index: index.name, value }] : [];
          });
          return admitWrite([{ table, value: base }, ...indexed], Math.max(1, Math.ceil(itemBytes(item) / WRITE_UNIT_BYTES)));
        }
        case 'UpdateItem':
        case 'DeleteItem': {
          const base = keyValue(request.Key?.[keys.partitionKey]);
          return base === undefined ? undefined : admitWrite([{ table, value: base }], 1);
        }
        case 'GetItem': {
          const base = keyValue(request.Key?.[keys.partitionKey]);
          if (base === undefined) return undefined;
          return admitRead({ table, value: base }, request, (answer) => (answer.Item === undefined ? [] : [answer.Item]));
        }
        default: {
          const index = request.IndexName === undefined ? undefined : keys.indexes.find((known) => known.name === request.IndexName);
          if (request.IndexName !== undefined && index === undefined) return undefined;
          const value = keyValue(queriedValue(request, index?.partitionKey ?? keys.partitionKey));
          if (value === undefined) return undefined;
          const partition = index === undefined ? { table, value } : { table, index: index.name, value };
          return admitRead(partition, request, (answer) => (Array.isArray(answer.Items) ? answer.Items : []));
        }
      }
    },
  };
}

/** A read's units: DynamoDB's own figure when the request asked for it, else an estimate from the items returned. */
function readUnits(request: RequestBody, answer: Record<string, unknown>, items: (answer: Record<string, unknown>) => unknown[]): number {
  const consumed = (answer.ConsumedCapacity as { CapacityUnits?: unknown } | undefined)?.CapacityUnits;
  if (request.ReturnConsumedCapacity !== undefined && request.ReturnConsumedCapacity !== 'NONE' && typeof consumed === 'number') {
    return consumed;
  }
  const bytes = items(answer).reduce<number>((sum, item) => sum + itemBytes(item as Record<string, AttributeValue>), 0);
  return Math.max(1, Math.ceil(bytes / READ_UNIT_BYTES)) * (request.ConsistentRead === true ? 1 : 0.5);
}

/** The value compared with the partition key by `=` in the key condition (expression or legacy KeyConditions). */
function queriedValue(request: RequestBody, partitionKey: string): AttributeValue | undefined {
  const legacy = request.KeyConditions?.[partitionKey]?.AttributeValueList?.[0];
  if (legacy !== undefined) return legacy;
  // `between :a and :b` splits into pieces that match nothing here, which is right: it is a sort key condition.
  for (const clause of (request.KeyConditionExpression ?? '').split(/\s+and\s+/i)) {
    const match = /^\s*\(?\s*(#?[\w.-]+)\s*=\s*(:[\w-]+)\s*\)?\s*$/.exec(clause);
    if (match === null) continue;
    const [, name = '', placeholder = ''] = match;
    const attribute = name.startsWith('#') ? request.ExpressionAttributeNames?.[name] : name;
    if (attribute === partitionKey) return request.ExpressionAttributeValues?.[placeholder];
  }
  return undefined;
}

/** A key attribute's value as DynamoDB's JSON carries it ({ S: 'pets' } is 'pets'); undefined when absent. */
function keyValue(attribute: AttributeValue | undefined): string | undefined {
  if (attribute === undefined || attribute === null || typeof attribute !== 'object') return undefined;
  const [value] = Object.values(attribute);
  return typeof value === 'string' ? value : undefined;
}

/**
 * An item's size as DynamoDB counts it: attribute names' UTF-8 bytes plus each value's (a number about
 * one byte per two significant digits plus one, binary its decoded bytes, a list or map three more).
 */
export function itemBytes(item: Record<string, AttributeValue>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += Buffer.byteLength(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  const v = value as unknown as Record<string, unknown>;
  if (typeof v.S === 'string') return Buffer.byteLength(v.S);
  if (typeof v.N === 'string') return numberBytes(v.N);
  if (typeof v.B === 'string') return Buffer.from(v.B, 'base64').length;
  if (Array.isArray(v.SS)) return v.SS.reduce((sum: number, s: string) => sum + Buffer.byteLength(s), 0);
  if (Array.isArray(v.NS)) return v.NS.reduce((sum: number, n: string) => sum + numberBytes(n), 0);
  if (Array.isArray(v.BS)) return v.BS.reduce((sum: number, b: string) => sum + Buffer.from(b, 'base64').length, 0);
  if (Array.isArray(v.L)) return 3 + v.L.reduce((sum: number, element: AttributeValue) => sum + 1 + valueBytes(element), 0);
  if (typeof v.M === 'object' && v.M !== null) return 3 + itemBytes(v.M as Record<string, AttributeValue>) + Object.keys(v.M).length;
  return 1;
}

function numberBytes(digits: string): number {
  const significant = digits.replace(/^[-+]?0*|\.|e.*$/gi, '').replace(/0+$/, '');
  return Math.ceil(significant.length / 2) + 1;
}

function parseObject(body: Buffer): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
