import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';

const work = mkdtempSync(join(tmpdir(), 'animal-store-output-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const LINES = 2_000;

/**
 * Runs a process that writes LINES lines of about 500 bytes (a megabyte: many times what a pipe
 * holds) with writeLine, its reader asleep for the first 300 ms, and returns what arrived.
 */
async function linesThroughSlowReader(openStreamFirst: boolean): Promise<{ code: number | null; lines: string[] }> {
  const script = join(work, `writer-${openStreamFirst}.ts`);
  writeFileSync(
    script,
    `import { writeLine } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/runtime/output.ts'))};
${openStreamFirst ? "process.stdout.write('');" : ''}
for (let i = 0; i < ${LINES}; i++) writeLine('stdout', JSON.stringify({ i, padding: 'x'.repeat(480) }));
`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.pause();
  await sleep(300);
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stdout.resume();
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, lines: output.split('\n').filter(Boolean) };
}

describe('the functions’ output lines', () => {
  it.each([
    ['nothing else in the process has opened process.stdout', false],
    ['process.stdout is open as well (as in the local API)', true],
  ])('arrive whole and in order when the reader is slower than the writer, when %s', async (_, openStreamFirst) => {
    const { code, lines } = await linesThroughSlowReader(openStreamFirst);
    expect(code).toBe(0);
    expect(lines.map((line) => (JSON.parse(line) as { i: number }).i)).toEqual(Array.from({ length: LINES }, (_, i) => i));
  });
});

describe('a runner’s destination for the output lines', () => {
  it('receives every line, without its newline, and nothing reaches stdout or stderr', async () => {
    const script = join(work, 'destined.ts');
    const received = join(work, 'destined.json');
    writeFileSync(
      script,
      `import { writeFileSync } from 'node:fs';
import { OUTPUT_DESTINATION } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/runtime/output-destination.mjs'))};
import { writeLine } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/runtime/output.ts'))};
const lines: unknown[] = [];
(globalThis as any)[OUTPUT_DESTINATION] = (stream: string, line: string) => lines.push([stream, line]);
writeLine('stdout', '{"level":"INFO"}');
writeLine('stderr', '{"level":"WARN"}');
writeFileSync(${JSON.stringify(received)}, JSON.stringify(lines));
`,
    );
    const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let written = '';
    child.stdout.on('data', (chunk) => (written += chunk));
    child.stderr.on('data', (chunk) => (written += chunk));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(written).toBe('');
    expect(JSON.parse(readFileSync(received, 'utf8'))).toEqual([
      ['stdout', '{"level":"INFO"}'],
      ['stderr', '{"level":"WARN"}'],
    ]);
  });
});
