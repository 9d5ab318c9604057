import { performance } from 'node:perf_hooks';
import { startLocalApi } from '../../local/local-api';
import { isDeployed } from './bench-functions';
import { quantile } from './statistics';

/** One operation driven through the local API. */
export interface LocalApiResult {
  readonly operation: string;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface LocalApiOptions {
  /** Requests per operation. */
  readonly requests: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
  /** Pets created before measuring. */
  readonly seed: number;
}

/**
 * The local API end to end (gateway → authorizer → function → dynalite, all in this process), per
 * operation: throughput and latency as a client of `npm start` sees them. Figures for comparing
 * changes on one machine, not a prediction of AWS latency; they vary more between runs than the
 * bundle-level figures.
 */
export async function measureLocalApi(options: LocalApiOptions): Promise<LocalApiResult[]> {
  // No START, END and REPORT lines: thousands of them would bury the bench's tables.
  const api = await startLocalApi({ port: 0, dynamoDbPort: 0, systemLogLevel: 'WARN' });
  const headers = { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' };

  async function timed(request: () => Promise<Response>, expected: number): Promise<number> {
    const start = performance.now();
    const response = await request();
    await response.arrayBuffer();
    if (response.status !== expected) throw new Error(`expected ${expected}, got ${response.status}`);
    return performance.now() - start;
  }

  async function measure(operation: string, request: (index: number) => Promise<Response>, expected: number): Promise<LocalApiResult> {
    const durations: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < options.requests) {
          const index = next++;
          durations.push(await timed(() => request(index), expected));
        }
      }),
    );
    const elapsed = performance.now() - started;
    return {
      operation,
      requests: durations.length,
      requestsPerSecond: Math.round((durations.length / elapsed) * 1000),
      p50Ms: quantile(durations, 0.5),
      p99Ms: quantile(durations, 0.99),
    };
  }

  try {
    const createBody = (index: number) => JSON.stringify({ name: `bench ${index}`, categoryId: 1 + (index % 7), status: 'available' });
    for (let index = 0; index < options.seed; index += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, offset) =>
          fetch(`${api.baseUrl}/pets`, { method: 'POST', headers, body: createBody(index + offset) }).then((r) => r.arrayBuffer()),
        ),
      );
    }
    const [first] = (await (await fetch(`${api.baseUrl}/pets?limit=1`, { headers })).json()) as Array<{ id: number }>;
    return [
      await measure('createPet', (index) => fetch(`${api.baseUrl}/pets`, { method: 'POST', headers, body: createBody(index) }), 201),
      await measure('listPets', () => fetch(`${api.baseUrl}/pets`, { headers }), 200),
      await measure('listPets limit=100 status', () => fetch(`${api.baseUrl}/pets?limit=100&status=available`, { headers }), 200),
      ...(isDeployed('getPet') ? [await measure('getPet', () => fetch(`${api.baseUrl}/pets/${first!.id}`, { headers }), 200)] : []),
      await measure('anonymous (401)', () => fetch(`${api.baseUrl}/pets`), 401),
    ];
  } finally {
    await api.close();
  }
}
