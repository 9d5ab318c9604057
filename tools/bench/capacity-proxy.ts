import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
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
  /** Capacity units, table and indexes together: a put is charged once more for each index entry it writes. */
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

/** The key attributes of each of a table's global secondary indexes, as DescribeTable reports them. */
function indexKeysOf(table: TableDescription | undefined): string[][] {
  return (table?.GlobalSecondaryIndexes ?? []).map((index) => (index.KeySchema ?? []).map((key) => key.AttributeName!));
}

/** DynamoDB, unlike dynalite, charges a put once per index it has the keys of: its size in KB, rounded up (indexes project it all). */
function indexWriteUnits(item: Record<string, AttributeValue>, indexKeys: readonly (readonly string[])[]): number {
  const entryUnits = Math.max(1, Math.ceil(itemSize(item) / 1024));
  return entryUnits * indexKeys.filter((keys) => keys.every((key) => item[key] !== undefined)).length;
}

async function readBody(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * Meters the unchanged functions' own requests: it adds ReturnConsumedCapacity TOTAL and records the answer, plus the
 * index entries a put writes, which dynalite does not charge. Answers pass back byte for byte; callers ignore the extra field.
 */
export async function startCapacityProxy(target: string): Promise<CapacityProxy> {
  const upstream = new URL(target);
  const record: Consumption[] = [];
  const describer = createLocalClient(target);
  const indexKeysByTable = new Map<string, Promise<string[][]>>();
  const indexKeysOfTable = (table: string) => {
    if (!indexKeysByTable.has(table)) {
      indexKeysByTable.set(
        table,
        describer.send(new DescribeTableCommand({ TableName: table })).then(({ Table }) => indexKeysOf(Table)),
      );
    }
    return indexKeysByTable.get(table)!;
  };
  const server = createServer(async (incoming, outgoing) => {
    try {
      const operation =
        String(incoming.headers['x-amz-target'] ?? '')
          .split('.')
          .pop() ?? '';
      let body = await readBody(incoming);
      const metered = METERED.has(operation);
      if (metered) body = Buffer.from(JSON.stringify({ ...JSON.parse(body.toString('utf8')), ReturnConsumedCapacity: 'TOTAL' }));
      const forwarded = httpRequest({
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, 'content-length': String(body.length) },
      });
      forwarded.end(body);
      const [answer] = (await once(forwarded, 'response')) as [IncomingMessage];
      const answerBody = await readBody(answer);
      if (metered && answer.statusCode === 200) {
        const consumed = (JSON.parse(answerBody.toString('utf8')) as { ConsumedCapacity?: unknown }).ConsumedCapacity;
        const { Item } = JSON.parse(body.toString('utf8')) as { Item?: Record<string, AttributeValue> };
        for (const entry of [consumed ?? []].flat() as Array<{ TableName: string; CapacityUnits: number }>) {
          const indexUnits =
            operation === 'PutItem' && Item !== undefined ? indexWriteUnits(Item, await indexKeysOfTable(entry.TableName)) : 0;
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
