import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { requestArbitrary, type FuzzRequest } from '../../tools/api-fuzz';
import { describeFailure, recordCaseLines } from '../../tools/fuzz-report';

/** A fuzz run whose check fails on every create, each case's function writing one line naming its request. */
async function failOnCreates(seed: number) {
  const lines = recordCaseLines();
  const result = await fc.check(
    fc.asyncProperty(requestArbitrary(), (request: FuzzRequest) =>
      lines.run(async () => {
        lines.output('stdout', `{"served":"${request.method} ${request.target}"}`);
        if (request.method === 'POST') throw new Error('expected 500 to be 201');
      }),
    ),
    { seed },
  );
  return { result, report: describeFailure({ result, seed, seconds: '1.5', lines: lines.failingLines() }) };
}

describe('npm run fuzz, when a case fails', () => {
  it('says how many cases ran, the seed to repeat the run with, and what failed', async () => {
    const { result, report } = await failOnCreates(7);
    expect(report).toMatch(
      new RegExp(`^\\nFAILED after ${result.numRuns} cases \\(1\\.5 s\\), seed 7, path [\\d:]+: expected 500 to be 201\\n`),
    );
  });

  it('prints the shrunk case, and only the lines its own functions wrote', async () => {
    const { result, report } = await failOnCreates(7);
    const [shrunk] = result.counterexample!;
    const printed = JSON.parse(report.split('Shrunk counterexample:\n')[1]!.split('\n\n')[0]!);
    expect(printed).toEqual(JSON.parse(JSON.stringify({ ...shrunk, body: shrunk.body?.toString('utf8') })));
    expect(report).toContain(`Its functions' lines:\n  {"served":"POST ${shrunk.target}"}\n\n`);
    expect(report.match(/"served"/g)).toHaveLength(1);
  });

  it('ends with a curl command that sends the shrunk case to npm start', async () => {
    const { result, report } = await failOnCreates(7);
    const [shrunk] = result.counterexample!;
    const lastLines = report.trimEnd().split('\n').slice(-2);
    expect(lastLines[0]).toBe('Reproduce against npm start (API_KEY: the printed key):');
    expect(lastLines[1]!.startsWith(`  curl -i -X POST 'http://localhost:3000${shrunk.target}'`)).toBe(true);
  });

  it('says so when the failing case ran no function', () => {
    const lines = recordCaseLines();
    const result = fc.check(
      fc.property(requestArbitrary(), (_request: FuzzRequest) => false),
      { seed: 1 },
    );
    expect(describeFailure({ result, seed: 1, seconds: '0.1', lines: lines.failingLines() })).toContain(
      "Its functions' lines:\n  (none)\n",
    );
  });
});
