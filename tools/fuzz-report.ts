import type fc from 'fast-check';
import { curlFor, type FuzzRequest } from './api-fuzz';
import { messageOf } from '../shared/runtime/error-message';

/** What `npm run fuzz` prints when a case failed: the shrunk case, its functions' lines, and a curl command for `npm start`. */
export function describeFailure(run: {
  readonly result: fc.RunDetails<[FuzzRequest]>;
  readonly seed: number;
  readonly seconds: string;
  /** The functions' lines of the last case that failed: once shrinking ends, the shrunk case's. */
  readonly lines: readonly string[];
}): string {
  const { result, seed, seconds, lines } = run;
  const [request] = result.counterexample!;
  return (
    `\nFAILED after ${result.numRuns} cases (${seconds} s), seed ${seed}, path ${result.counterexamplePath}: ` +
    `${messageOf(result.errorInstance)}\n\n` +
    `Shrunk counterexample:\n${JSON.stringify({ ...request, body: request.body?.toString('utf8') }, null, 2)}\n\n` +
    `Its functions' lines:\n${lines.map((line) => `  ${line}\n`).join('') || '  (none)\n'}\n` +
    `Reproduce against npm start (API_KEY: the printed key):\n  ${curlFor(request)}\n`
  );
}

/** The functions' lines of each case as it runs, kept for the last case that failed: once shrinking ends, the shrunk case's. */
export function recordCaseLines() {
  let caseLines: string[] = [];
  let failing: string[] = [];
  return {
    /** The local API's `output`: a line one of its functions wrote. */
    output: (_stream: unknown, line: string) => {
      caseLines.push(line);
    },
    /** Runs one case, keeping its lines if it throws. */
    async run(check: () => Promise<void>): Promise<void> {
      caseLines = [];
      try {
        await check();
      } catch (error) {
        failing = caseLines;
        throw error;
      }
    },
    failingLines: (): readonly string[] => failing,
  };
}
