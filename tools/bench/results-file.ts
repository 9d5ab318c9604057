import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { PRICES } from './prices';
import type { BenchReport } from './report';

/** tools/bench/results.json, for docs/performance.md and comparing runs (results-quick.json with --quick: not committed). */
export function writeResults(report: BenchReport): string {
  const { coldStarts, warmRequests } = report;
  const results = {
    quick: report.options.quick,
    settings: report.options.settings,
    machine: { runtime: report.nodeVersion, cpus: cpus().length, cpu: cpus()[0]?.model },
    coldStarts: Object.fromEntries(coldStarts.cold),
    ...(report.options.countInstructions
      ? { instructions: { cold: Object.fromEntries(coldStarts.instructions), warm: Object.fromEntries(warmRequests.instructions) } }
      : {}),
    warm: Object.fromEntries(warmRequests.warm),
    authorizer: Object.fromEntries(warmRequests.authorizer),
    capacity: report.capacity,
    memory: report.memory.map(({ stage, name, estimates, cheapest, configured }) => ({
      stage,
      function: name,
      estimates,
      cheapest: cheapest?.memoryMiB,
      configured,
    })),
    bill: report.bill,
    prices: PRICES,
    verdicts: report.verdicts.all,
  };
  const file = join(import.meta.dirname, report.options.quick ? 'results-quick.json' : 'results.json');
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  return file;
}
