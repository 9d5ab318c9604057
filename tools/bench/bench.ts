import { stages } from '../../infra/stages';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import { BENCH_USAGE, readBenchOptions } from './bench-settings';
import { setUpBench } from './bench-setup';
import { computeBill } from './bill';
import { valgrindInstalled } from './instructions';
import { capacityIndependentOfTableSize, measureCapacity } from './measure-capacity';
import { measureAnswerClasses } from './measure-answer-classes';
import { measureColdStarts } from './measure-cold-starts';
import { measureWarmRequests } from './measure-warm-requests';
import { chooseMemory, measuredCostOf } from './memory-sizing';
import { printReport } from './report';
import { resultsOf, saveResults } from './results-file';
import { judgeBench, summarizeVerdicts } from './bench-verdicts';
import { showUsage, usageFailure } from '../command-line';
import { messageOf } from '../../shared/runtime/error-message';

// `npm run bench`: each function as `cdk synth` builds it, run by the Lambda runtime's Node against dynalite beside
// its floor (tools/bench/floors/): the same SDK client and the commands it issues, built alike. Ratios to the floor in
// instructions are the verdicts (--instructions); times are this machine's and only context. A quick run judges
// nothing. Only --record writes the committed results (and docs/costs.md from them): any other run leaves the tree as it was.

const options = readOptions();
const { settings } = options;
if (options.countInstructions && !valgrindInstalled()) {
  console.error('bench: --instructions counts instructions with valgrind, which is not installed (apt-get install valgrind).');
  process.exit(2);
}

const bench = await setUpBench(settings);
try {
  const coldStarts = await measureColdStarts(bench, settings, options.countInstructions);
  const warmRequests = await measureWarmRequests(bench, settings, options.countInstructions);
  const answers = await measureAnswerClasses(bench, settings, options.countInstructions);
  const capacity = await measureCapacity(bench, settings);

  const memory = chooseMemory(stages, API_FUNCTIONS, (name, stage) => measuredCostOf(coldStarts, warmRequests, name, stage));
  const bill = computeBill({ ...warmRequests, answers: answers.warm }, coldStarts.cold, capacity, settings.petCounts[0]!);
  // A quick run's samples support no verdict, so it is not judged at all.
  const verdicts = options.quick
    ? undefined
    : judgeBench({
        instructions: options.countInstructions
          ? { cold: coldStarts.instructions, warm: warmRequests.instructions, answers: answers.instructions }
          : undefined,
        bill,
        capacityIndependentOfTableSize: settings.petCounts.length > 1 ? capacityIndependentOfTableSize(capacity) : undefined,
        memory,
      });

  const report = { options, nodeVersion: bench.nodeVersion, coldStarts, warmRequests, answers, capacity, memory, bill, verdicts };
  printReport(report);
  console.log(`Wrote ${saveResults(resultsOf(report), options).join(' and ')}.`);
  process.exitCode = summarizeVerdicts(verdicts?.all).exitCode;
} finally {
  await bench.close();
}

function readOptions() {
  try {
    const read = readBenchOptions(process.argv.slice(2));
    if (read.help) showUsage(BENCH_USAGE);
    return read;
  } catch (error) {
    return usageFailure(BENCH_USAGE)(messageOf(error));
  }
}
