import fc from 'fast-check';
import { shellSettingRefusals } from '../local/config-check';
import { createLocalClient } from '../local/dynamodb-local';
import { startLocalApi } from '../local/local-api';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { checkCase, newestPetId, requestArbitrary, send, type FuzzRequest } from './api-fuzz';
import { parseCommandLine } from './command-line';
import { describeFailure, recordCaseLines } from './fuzz-report';

// `npm run fuzz`: the standing fuzz suite (tools/api-fuzz.ts) against a fresh in-memory local API, for a few minutes
// or as many cases as asked; a failure prints the shrunk case as a curl command for `npm start`, and its functions' lines.
const DEFAULT_MINUTES = 3;
const usage = `Usage: npm run fuzz -- [--minutes M] [--runs N] [--seed S]

  --minutes M  stop after M minutes (${DEFAULT_MINUTES} unless --runs is given); with --runs, whichever comes first
  --runs N     stop after N cases
  --seed S     the seed of a run to repeat (printed by every run)`;
const { values } = parseCommandLine(
  {
    options: {
      minutes: { type: 'string' },
      runs: { type: 'string' },
      seed: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  },
  usage,
);
const runs = values.runs === undefined ? undefined : Number(values.runs);
const minutes = values.minutes !== undefined ? Number(values.minutes) : runs === undefined ? DEFAULT_MINUTES : undefined;
const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
if ((runs !== undefined && (!Number.isInteger(runs) || runs < 1)) || (minutes !== undefined && !(minutes > 0)) || !Number.isInteger(seed)) {
  process.stderr.write(`${usage}\n`);
  process.exit(2);
}

const refusals = shellSettingRefusals(process.env);
if (refusals.length > 0) {
  for (const refusal of refusals) process.stderr.write(`Could not start the fuzz run: ${refusal}\n`);
  process.exit(2);
}

// Metric lines say nothing of a failure; the functions' logs are kept per case, printed only for the failing one.
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
const lines = recordCaseLines();
const api = await startLocalApi({ port: 0, dynamoDbPort: 0, output: lines.output });
const client = documentClientOver(createLocalClient(api.dynamoDbEndpoint));
const started = performance.now();
let done = 0;
/** How often each status came back: a run that never reached a 201 or a 404 proved little. */
const statuses = new Map<number, number>();
const limits = [runs !== undefined && `${runs} cases`, minutes !== undefined && `${minutes} minutes`].filter(Boolean);
process.stdout.write(
  `Fuzzing ${api.baseUrl} for ${limits.join(' or ')}${limits.length > 1 ? ', whichever comes first' : ''}, seed ${seed}\n`,
);
const progress = setInterval(() => {
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`  ${done} cases in ${seconds.toFixed(0)} s (${(done / seconds).toFixed(0)}/s)\n`);
}, 10_000);

const result = await fc.check(
  fc.asyncProperty(requestArbitrary(), async (request: FuzzRequest) => {
    done++;
    await lines.run(async () => {
      const before = await newestPetId(client);
      const answer = await send(api.baseUrl, api.apiKey, request);
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      await checkCase(client, request, answer, before);
    });
  }),
  {
    seed,
    numRuns: runs ?? Number.MAX_SAFE_INTEGER,
    ...(minutes === undefined ? {} : { interruptAfterTimeLimit: minutes * 60_000, markInterruptAsFailure: false }),
    endOnFailure: false,
  },
);
clearInterval(progress);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const alive = (await fetch(`${api.baseUrl}/pets?limit=1`, { headers: { authorization: `Bearer ${api.apiKey}` } })).status === 200;
client.destroy();
await api.close();

if (result.failed) {
  process.stdout.write(describeFailure({ result, seed, seconds, lines: lines.failingLines() }));
  process.exit(1);
}
const seen = [...statuses]
  .sort(([a], [b]) => a - b)
  .map(([status, count]) => `${status}×${count}`)
  .join(' ');
process.stdout.write(
  `\n${result.numRuns} cases held in ${seconds} s${result.interrupted ? ' (the time limit)' : ''}, seed ${seed}; the server ${alive ? 'is still up' : 'is DOWN'}.\nStatuses: ${seen}\n`,
);
process.exit(alive ? 0 : 1);
