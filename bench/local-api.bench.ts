import { performance } from 'node:perf_hooks';
import { startLocalApi } from '../local/local-api';

/**
 * `npm run bench`: latency and memory of the API running locally (gateway → authorizer → function →
 * dynalite). Numbers are for comparing changes on one machine, not a prediction of AWS latency.
 * Bounded: a fixed number of requests, then it stops.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS || 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY || 8);
const SEED = Number(process.env.BENCH_SEED || 1_000);

const api = await startLocalApi({ port: 0, dynamoDbPort: 0 });
const headers = { authorization: `Bearer ${api.apiKey}`, 'content-type': 'application/json' };

async function timed(request: () => Promise<Response>, expected: number): Promise<number> {
  const start = performance.now();
  const response = await request();
  await response.arrayBuffer();
  if (response.status !== expected) throw new Error(`expected ${expected}, got ${response.status}`);
  return performance.now() - start;
}

async function measure(name: string, request: (index: number) => Promise<Response>, expected: number) {
  const durations: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const index = next++;
        durations.push(await timed(() => request(index), expected));
      }
    }),
  );
  const elapsed = performance.now() - started;
  durations.sort((a, b) => a - b);
  const at = (quantile: number) => durations[Math.min(durations.length - 1, Math.floor(quantile * durations.length))]!;
  return {
    operation: name,
    requests: durations.length,
    'req/s': Math.round((durations.length / elapsed) * 1000),
    'p50 ms': at(0.5).toFixed(1),
    'p95 ms': at(0.95).toFixed(1),
    'p99 ms': at(0.99).toFixed(1),
  };
}

try {
  const coldStart = performance.now();
  await timed(() => fetch(`${api.baseUrl}/pets`, { headers }), 200);
  const firstRequestMs = performance.now() - coldStart;

  const createBody = (index: number) => JSON.stringify({ name: `bench ${index}`, categoryId: 1 + (index % 7), status: 'available' });
  for (let index = 0; index < SEED; index += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, offset) =>
        fetch(`${api.baseUrl}/pets`, { method: 'POST', headers, body: createBody(index + offset) }).then((r) => r.arrayBuffer()),
      ),
    );
  }
  const [first] = (await (await fetch(`${api.baseUrl}/pets?limit=1`, { headers })).json()) as Array<{ id: number }>;

  const results = [
    await measure('createPet', (index) => fetch(`${api.baseUrl}/pets`, { method: 'POST', headers, body: createBody(index) }), 201),
    await measure('listPets limit=20', () => fetch(`${api.baseUrl}/pets`, { headers }), 200),
    await measure('listPets limit=100 status', () => fetch(`${api.baseUrl}/pets?limit=100&status=available`, { headers }), 200),
    await measure('getPet', () => fetch(`${api.baseUrl}/pets/${first!.id}`, { headers }), 200),
    await measure('401 no key', () => fetch(`${api.baseUrl}/pets`), 401),
  ];
  console.log(`\nLocal API, ${SEED} pets seeded, ${REQUESTS} requests per operation, concurrency ${CONCURRENCY}`);
  console.log(`First request (bundling + cold start of authorizer and listPets): ${firstRequestMs.toFixed(0)} ms`);
  console.table(results);
  const memory = process.memoryUsage();
  console.log(`Process memory: rss ${(memory.rss / 2 ** 20).toFixed(0)} MiB, heap used ${(memory.heapUsed / 2 ** 20).toFixed(0)} MiB`);
} finally {
  await api.close();
}
