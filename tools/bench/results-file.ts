import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { COSTS_PATH, renderCostsFromSources } from '../costs';
import type { BenchOptions } from './bench-settings';
import { PRICES } from './prices';
import type { BenchReport } from './report';

/** The folder the bench's results files are in. */
export const RESULTS_DIR = import.meta.dirname;

/**
 * Where a run's results go. Only a recorded run writes the committed results.json, which docs/costs.md is priced from:
 * any other run writes a file git ignores, so running the bench leaves the tree as it was.
 */
export function resultsFileOf(options: Pick<BenchOptions, 'quick' | 'record'>): string {
  if (options.quick) return 'results-quick.json';
  return options.record ? 'results.json' : 'results-last.json';
}

/** What a results file holds: a quick run's has no verdicts, since it was not judged. */
export function resultsOf(report: BenchReport): object {
  const { coldStarts, warmRequests } = report;
  return {
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
    memory: report.memory.map(({ stage, name, estimates, cheapest, configured, stands }) => ({
      stage,
      function: name,
      estimates,
      cheapest: cheapest?.memoryMiB,
      configured,
      stands,
    })),
    bill: report.bill,
    prices: PRICES,
    ...(report.verdicts ? { verdicts: report.verdicts.all } : {}),
  };
}

/**
 * Writes the results where resultsFileOf says. Recording also renders docs/costs.md from them, in this process, so
 * the page is never stale against the results it was priced from. Returns the files written.
 */
export function saveResults(
  results: object,
  options: Pick<BenchOptions, 'quick' | 'record'>,
  paths: { readonly dir: string; readonly costs: string } = { dir: RESULTS_DIR, costs: COSTS_PATH },
): string[] {
  const file = join(paths.dir, resultsFileOf(options));
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  if (!options.record) return [file];
  writeFileSync(paths.costs, renderCostsFromSources(file));
  return [file, paths.costs];
}
