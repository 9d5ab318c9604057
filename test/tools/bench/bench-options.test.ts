import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { readBenchOptions } from '../../../tools/bench/bench-settings';
import { judge, summarizeVerdicts } from '../../../tools/bench/bench-verdicts';
import { RESULTS_DIR, resultsFileOf, saveResults } from '../../../tools/bench/results-file';
import { COSTS_PATH } from '../../../tools/costs';

/** Whether git ignores a path of the repository. */
const ignored = (path: string) => {
  try {
    execFileSync('git', ['check-ignore', '--quiet', relative(PROJECT_ROOT, path)], { cwd: PROJECT_ROOT });
    return true;
  } catch {
    return false;
  }
};

describe("npm run bench's command line", () => {
  it('runs in full, without instructions and without recording, when given nothing', () => {
    const options = readBenchOptions([]);
    expect(options).toMatchObject({ quick: false, countInstructions: false, record: false, help: false });
    expect(options.settings.coldRuns).toBeGreaterThan(readBenchOptions(['--quick']).settings.coldRuns);
  });

  it('reads --quick, --instructions and --record', () => {
    expect(readBenchOptions(['--quick', '--instructions'])).toMatchObject({ quick: true, countInstructions: true, record: false });
    expect(readBenchOptions(['--record', '--instructions'])).toMatchObject({ quick: false, countInstructions: true, record: true });
  });

  it('refuses to record a quick run, and an option it does not know', () => {
    expect(() => readBenchOptions(['--quick', '--record'])).toThrow(/--record records a full run/);
    expect(() => readBenchOptions(['--recrod'])).toThrow(/--recrod/);
    expect(() => readBenchOptions(['results.json'])).toThrow();
  });
});

describe("where the bench's results go", () => {
  it('only a recorded run writes the committed results.json; the others write files git ignores', () => {
    expect(resultsFileOf({ quick: false, record: true })).toBe('results.json');
    expect(resultsFileOf({ quick: false, record: false })).toBe('results-last.json');
    expect(resultsFileOf({ quick: true, record: false })).toBe('results-quick.json');
    expect(ignored(join(RESULTS_DIR, 'results-last.json'))).toBe(true);
    expect(ignored(join(RESULTS_DIR, 'results-quick.json'))).toBe(true);
    expect(ignored(join(RESULTS_DIR, 'results.json'))).toBe(false);
  });

  const dir = mkdtempSync(join(tmpdir(), 'bench-results-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const recorded = JSON.parse(readFileSync(join(RESULTS_DIR, 'results.json'), 'utf8')) as object;

  it('a run not recorded writes its results file only, and leaves the cost page alone', () => {
    const costs = join(dir, 'costs-unrecorded.md');
    expect(saveResults(recorded, { quick: false, record: false }, { dir, costs })).toEqual([join(dir, 'results-last.json')]);
    expect(() => readFileSync(costs)).toThrow();
  });

  it('a recorded run renders the cost page from the results it wrote, so the page is never stale against them', () => {
    const costs = join(dir, 'costs.md');
    expect(saveResults(recorded, { quick: false, record: true }, { dir, costs })).toEqual([join(dir, 'results.json'), costs]);
    expect(readFileSync(join(dir, 'results.json'), 'utf8')).toBe(readFileSync(join(RESULTS_DIR, 'results.json'), 'utf8'));
    // The committed results rendered the committed page: the same results render the same page.
    expect(readFileSync(costs, 'utf8')).toBe(readFileSync(COSTS_PATH, 'utf8'));
  });
});

describe("a bench run's outcome", () => {
  it('of a quick run is no verdict and exit 0, saying plainly that it judged nothing', () => {
    const outcome = summarizeVerdicts(undefined);
    expect(outcome.verdict).toBe('none');
    expect(outcome.exitCode).toBe(0);
    expect(outcome.summary.join('\n')).toMatch(/quick run judges nothing/);
  });

  it('of a full run passes, exit 0, when every verdict passes', () => {
    const outcome = summarizeVerdicts([judge('log bytes getPet', 525, 700), judge('warm instructions getPet', 1.04, 1.1, 0.002)]);
    expect(outcome).toMatchObject({ verdict: 'pass', exitCode: 0 });
    expect(outcome.summary).toEqual(['Verdicts: 2 of 2 pass.']);
  });

  it('of a full run fails, exit 1, on a verdict beyond its limit or refused, naming each', () => {
    const outcome = summarizeVerdicts([
      judge('log bytes getPet', 800, 700),
      judge('warm instructions getPet', 1.09, 1.1, 0.05),
      judge('log bytes listPets', 525, 700),
    ]);
    expect(outcome).toMatchObject({ verdict: 'fail', exitCode: 1 });
    expect(outcome.summary).toEqual([
      'Verdicts: 1 of 3 pass.',
      '  FAIL log bytes getPet: 800 > 700',
      '  REFUSED warm instructions getPet: 1.09, its runs 0.05 apart, 0.01 from 1.1',
    ]);
  });
});
