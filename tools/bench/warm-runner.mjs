// The warm benchmark's Lambda instance (tools/bench/warm.ts), run by the runtime's Node: a function and its
// floor share one process and its noise. Plain JavaScript: it must load in a bare Node with nothing compiled.
import { readFileSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { lambdaContextFromEnvironment } from '../../local/lambda-context.mjs';
import { OUTPUT_DESTINATION } from '../../shared/runtime/output-destination.mjs';

const [configFile, resultFile] = process.argv.slice(2);
const { subjects, rounds, batch, warmup, markRounds } = JSON.parse(readFileSync(configFile, 'utf8'));

// The subjects' lines: counted for the bill's log ingestion, then written as on Lambda, synchronously
// to the descriptor (stdout is /dev/null here; warm.ts reads stderr).
let current;
globalThis[OUTPUT_DESTINATION] = (stream, line) => {
  const bytes = Buffer.from(`${line}\n`);
  if (current !== undefined) current.logBytes += bytes.length;
  for (let written = 0; written < bytes.length; ) written += writeSync(stream === 'stdout' ? 1 : 2, bytes, written);
};

const require = createRequire(import.meta.url);
const loaded = [];
for (const subject of subjects) {
  Object.assign(process.env, subject.env);
  // As Lambda's runtime loads its handler file (warm.ts): index.js required, index.mjs imported. Each subject gets its
  // own module instance, even when two share a bundle: the required one leaves the cache, the imported one has a query string.
  const { file } = subject;
  const module = file.endsWith('.mjs') ? await import(`${pathToFileURL(file).href}?subject=${loaded.length}`) : require(file);
  delete require.cache[file];
  const measured = { next: 0, latenciesMs: [], cpuUs: 0, requests: 0, logBytes: 0, statuses: {} };
  loaded.push({ ...subject, handler: module.handler, ...measured });
}

async function invoke(subject, record) {
  // The i-th request's own event (warm.ts, WarmSubject): a subject with one repeats it.
  const event = subject.events[subject.next++ % subject.events.length];
  const started = performance.now();
  const result = await subject.handler(event, lambdaContextFromEnvironment(`bench-${subject.next}`, 'bench'));
  const elapsed = performance.now() - started;
  if (record) {
    subject.latenciesMs.push(elapsed);
    const status = result?.statusCode ?? result?.context?.outcome ?? 'ok';
    subject.statuses[status] = (subject.statuses[status] ?? 0) + 1;
  }
}

for (const subject of loaded) for (let i = 0; i < warmup; i++) await invoke(subject, false);

for (let round = 0; round < rounds; round++) {
  // Under callgrind each round is a window counted alone, from the same heap: all garbage collected (node runs with
  // --expose-gc), then a call that nothing else makes marks where the window begins, and another where it ends
  // (tools/bench/instructions.ts).
  if (markRounds) {
    globalThis.gc();
    process.resourceUsage();
  }
  const order = round % 2 === 0 ? loaded : [...loaded].reverse();
  for (const subject of order) {
    current = subject;
    const cpu = process.cpuUsage();
    for (let i = 0; i < batch; i++) await invoke(subject, true);
    const used = process.cpuUsage(cpu);
    subject.cpuUs += used.user + used.system;
    subject.requests += batch;
    current = undefined;
  }
  if (markRounds) process.resourceUsage();
}

const results = loaded.map(({ label, latenciesMs, cpuUs, requests, logBytes, statuses }) => ({
  label,
  latenciesMs,
  cpuUsPerRequest: cpuUs / requests,
  logBytesPerRequest: logBytes / requests,
  statuses,
}));
writeFileSync(resultFile, JSON.stringify(results));
