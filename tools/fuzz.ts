import fc from 'fast-check';
import { shellSettingRefusals } from '../local/config-check';
import { createLocalClient } from '../local/dynamodb-local';
import { startLocalApi } from '../local/local-api';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { checkCase, curlFor, newestPetId, requestArbitrary, send, type FuzzRequest } from './api-fuzz';
import { messageOf } from '../shared/runtime/error-message';
import { parseCommandLine } from './command-line';

// `npm run fuzz`: the standing fuzz suite (tools/api-fuzz.ts) for as long as you like, against a fresh in-memory
// local API; a failure prints the shrunk case as a curl command for `npm start`.
const usage = 'Usage: npm run fuzz -- [--runs N] [--seed S]';
const { values } = parseCommandLine({ options: { runs: { type: 'string', default: '100000' }, seed: { type: 'string' } } }, usage);
const runs = Number(values.runs);
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed)) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}

const refusals = shellSettingRefusals(process.env);
if (refusals.length > 0) {
  for (const refusal of refusals) process.stderr.write(`Could not start the fuzz run: ${refusal}\n`);
  process.exit(2);
}

// The functions' logs and metric lines would drown the report.
process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const api = await startLocalApi({ port: 0, dynamoDbPort: 0 });
const client = documentClientOver(createLocalClient(api.dynamoDbEndpoint));
const started = performance.now();
let done = 0;
/** How often each status came back: a run that never reached a 201 or a 404 proved little. */
const statuses = new Map<number, number>();
process.stdout.write(`Fuzzing ${api.baseUrl} with ${runs} cases, seed ${seed}\n`);
const progress = setInterval(() => {
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`  ${done} cases in ${seconds.toFixed(0)} s (${(done / seconds).toFixed(0)}/s)\n`);
}, 10_000);

const result = await fc.check(
  fc.asyncProperty(requestArbitrary(), async (request: FuzzRequest) => {
    done++;
    const before = await newestPetId(client);
    const answer = await send(api.baseUrl, api.apiKey, request);
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
    await checkCase(client, request, answer, before);
  }),
  { seed, numRuns: runs, endOnFailure: false },
);
clearInterval(progress);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const alive = (await fetch(`${api.baseUrl}/pets?limit=1`, { headers: { authorization: `Bearer ${api.apiKey}` } })).status === 200;
client.destroy();
await api.close();

if (result.failed) {
  const [request] = result.counterexample as [FuzzRequest];
  process.stdout.write(
    `\nFAILED after ${result.numRuns} cases (${seconds} s), seed ${seed}, path ${result.counterexamplePath}: ` +
      `${messageOf(result.errorInstance)}\n\n` +
      `Shrunk counterexample:\n${JSON.stringify({ ...request, body: request.body?.toString('utf8') }, null, 2)}\n\n` +
      `Reproduce against npm start (API_KEY: the printed key):\n  ${curlFor(request)}\n`,
  );
  process.exit(1);
}
const seen = [...statuses]
  .sort(([a], [b]) => a - b)
  .map(([status, count]) => `${status}×${count}`)
  .join(' ');
process.stdout.write(
  `\n${result.numRuns} cases held in ${seconds} s, seed ${seed}; the server ${alive ? 'is still up' : 'is DOWN'}.\nStatuses: ${seen}\n`,
);
process.exit(alive ? 0 : 1);
