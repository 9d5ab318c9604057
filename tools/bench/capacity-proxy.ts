import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { DescribeTableCommand, type AttributeValue, type TableDescription } from '@aws-sdk/client-dynamodb';
import { itemSize } from 'dynalite/db/index.js';
import { createLocalClient } from '../../local/dynamodb-local';

/** The operations whose requests accept ReturnConsumedCapacity. */
const METERED = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchGetItem', 'BatchWriteItem']);

/** What one DynamoDB request cost, as DynamoDB reported it. */
export interface Consumption {
  /** The DynamoDB operation, from X-Amz-Target: PutItem, Query… */
  readonly operation: string;
  readonly table: string;
  /** Capacity units, table and indexes together: a write is charged once more for each index entry it puts or removes. */
  readonly capacityUnits: number;
  /** Whether they are read or write units (DynamoDB bills them at different prices). */
  readonly kind: 'read' | 'write';
}

export interface CapacityProxy {
  /** The endpoint to give the functions instead of DynamoDB's. */
  readonly endpoint: string;
  /** What the requests since the last call cost; the record starts afresh. */
  take(): Consumption[];
  close(): Promise<void>;
}

const READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem']);

/** The writes of one item whose index entries DynamoDB charges and dynalite does not. */
const ITEM_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

type Item = Record<string, AttributeValue>;

/** A table's key attributes and each global secondary index's, as DescribeTable reports them. */
interface TableKeys {
  readonly key: readonly string[];
  readonly indexes: readonly (readonly string[])[];
}

function tableKeysOf(table: TableDescription | undefined): TableKeys {
  return {
    key: (table?.KeySchema ?? []).map((key) => key.AttributeName!),
    indexes: (table?.GlobalSecondaryIndexes ?? []).map((index) => (index.KeySchema ?? []).map((key) => key.AttributeName!)),
  };
}

/** An index entry's write units: its size in KB, rounded up (the indexes project the item whole). */
function entryUnits(item: Item): number {
  return Math.max(1, Math.ceil(itemSize(item) / 1024));
}

/**
 * What DynamoDB, unlike dynalite, charges the indexes for a write that turned the item `before` into `after` (either
 * absent): per index, one write to remove the entry it held and one to put the entry it holds; one write in all when
 * the entry stays under the same key, none when it is unchanged.
 */
function indexWriteUnits(before: Item | undefined, after: Item | undefined, indexes: TableKeys['indexes']): number {
  let units = 0;
  for (const keys of indexes) {
    const was = before !== undefined && keys.every((key) => before[key] !== undefined) ? before : undefined;
    const is = after !== undefined && keys.every((key) => after[key] !== undefined) ? after : undefined;
    if (was !== undefined && is !== undefined && keys.every((key) => isDeepStrictEqual(was[key], is[key]))) {
      units += isDeepStrictEqual(was, is) ? 0 : entryUnits(is);
    } else {
      units += (was === undefined ? 0 : entryUnits(was)) + (is === undefined ? 0 : entryUnits(is));
    }
  }
  return units;
}

async function readBody(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Meters the unchanged functions' own requests: it adds ReturnConsumedCapacity TOTAL and records the answer, plus the
 * index entries a write puts or removes, which dynalite does not charge: it reads the item, consistently, before the
 * write and after it. Answers pass back byte for byte; callers ignore the extra field.
 */
export async function startCapacityProxy(target: string): Promise<CapacityProxy> {
  const upstream = new URL(target);
  const record: Consumption[] = [];
  const describer = createLocalClient(target);
  const keysByTable = new Map<string, Promise<TableKeys>>();
  const keysOfTable = (table: string) => {
    if (!keysByTable.has(table)) {
      keysByTable.set(
        table,
        describer.send(new DescribeTableCommand({ TableName: table })).then(({ Table }) => tableKeysOf(Table)),
      );
    }
    return keysByTable.get(table)!;
  };
  const send = async (headers: IncomingMessage['headers'], body: Buffer) => {
    const forwarded = httpRequest({
      host: upstream.hostname,
      port: upstream.port,
      method: 'POST',
      path: '/',
      headers: { ...headers, 'content-length': String(body.length) },
    });
    forwarded.end(body);
    const [answer] = (await once(forwarded, 'response')) as [IncomingMessage];
    return { answer, body: await readBody(answer) };
  };
  /** The item as the table holds it now, in DynamoDB's own JSON; the same signed headers serve, as dynalite checks no signature. */
  const itemAt = async (headers: IncomingMessage['headers'], TableName: string, Key: Item): Promise<Item | undefined> => {
    const target = String(headers['x-amz-target']).replace(/\.\w+$/, '.GetItem');
    const { body } = await send(
      { ...headers, 'x-amz-target': target },
      Buffer.from(JSON.stringify({ TableName, Key, ConsistentRead: true })),
    );
    return (JSON.parse(body.toString('utf8')) as { Item?: Item }).Item;
  };
  const server = createServer(async (incoming, outgoing) => {
    try {
      const operation =
        String(incoming.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      let body = await readBody(incoming);
      const metered = METERED.has(operation);
      const input = metered ? (JSON.parse(body.toString('utf8')) as { TableName: string; Item?: Item; Key?: Item }) : undefined;
      if (input !== undefined) body = Buffer.from(JSON.stringify({ ...input, ReturnConsumedCapacity: 'TOTAL' }));
      // The item before and after a write, read only where it has index entries to charge.
      const keys = input !== undefined && ITEM_WRITES.has(operation) ? await keysOfTable(input.TableName) : undefined;
      const key = keys !== undefined && keys.indexes.length > 0 ? (input!.Key ?? pick(input!.Item!, keys.key)) : undefined;
      const before = key === undefined ? undefined : await itemAt(incoming.headers, input!.TableName, key);
      const { answer, body: answerBody } = await send(incoming.headers, body);
      if (input !== undefined && answer.statusCode === 200) {
        const consumed = (JSON.parse(answerBody.toString('utf8')) as { ConsumedCapacity?: unknown }).ConsumedCapacity;
        const after =
          key === undefined ? undefined : operation === 'PutItem' ? input.Item : await itemAt(incoming.headers, input.TableName, key);
        const indexUnits = key === undefined ? 0 : indexWriteUnits(before, after, keys!.indexes);
        for (const entry of [consumed ?? []].flat() as Array<{ TableName: string; CapacityUnits: number }>) {
          record.push({
            operation,
            table: entry.TableName,
            capacityUnits: entry.CapacityUnits + indexUnits,
            kind: READS.has(operation) ? 'read' : 'write',
          });
        }
      }
      outgoing.writeHead(answer.statusCode ?? 500, answer.headers);
      outgoing.end(answerBody);
    } catch (error) {
      outgoing.destroy(error as Error);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    take: () => record.splice(0),
    async close() {
      describer.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function pick(item: Item, attributes: readonly string[]): Item {
  return Object.fromEntries(attributes.map((attribute) => [attribute, item[attribute]!]));
}
