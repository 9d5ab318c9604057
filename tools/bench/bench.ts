import { stages } from '../../infra/stages';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import { readBenchOptions } from './bench-settings';
import { setUpBench } from './bench-setup';
import { computeBill } from './bill';
import { valgrindInstalled } from './instructions';
import { capacityIndependentOfTableSize, measureCapacity } from './measure-capacity';
import { measureColdStarts } from './measure-cold-starts';
import { measureWarmRequests } from './measure-warm-requests';
import { chooseMemory, measuredCostOf } from './memory-sizing';
import { printReport } from './report';
import { writeResults } from './results-file';
import { judgeBench } from './bench-verdicts';

// `npm run bench`: each function as `cdk synth` builds it, run by the Lambda runtime's Node against dynalite beside
// its floor (tools/bench/floors/): the same SDK client and the commands it issues, built alike. Ratios to the floor in
// instructions are the verdicts (--instructions); times are this machine's and only context.

const options = readBenchOptions(process.argv);
const { settings } = options;
if (options.countInstructions && !valgrindInstalled()) {
  console.error('bench: --instructions counts instructions with valgrind, which is not installed (apt-get install valgrind).');
  process.exit(2);
}

const bench = await setUpBench(settings);
try {
  const coldStarts = await measureColdStarts(bench, settings, options.countInstructions);
  const warmRequests = await measureWarmRequests(bench, settings, options.countInstructions);
  const capacity = await measureCapacity(bench, settings);

  const memory = chooseMemory(stages, API_FUNCTIONS, (name, stage) => measuredCostOf(coldStarts, warmRequests, name, stage));
  const bill = computeBill(warmRequests, coldStarts.cold, capacity, settings.petCounts[0]!);
  const verdicts = judgeBench({
    instructions: options.countInstructions ? { cold: coldStarts.instructions, warm: warmRequests.instructions } : undefined,
    bill,
    capacityIndependentOfTableSize: settings.petCounts.length > 1 ? capacityIndependentOfTableSize(capacity) : undefined,
    memory,
  });

  const report = { options, nodeVersion: bench.nodeVersion, coldStarts, warmRequests, capacity, memory, bill, verdicts };
  printReport(report);
  console.log(`Wrote ${writeResults(report)}.`);
  process.exitCode = verdicts.all.every((verdict) => verdict.pass) ? 0 : 1;
} finally {
  await bench.close();
}
