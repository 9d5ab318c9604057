import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createFunctionRuntime,
  FunctionOutOfMemoryError,
  FunctionTimeoutError,
  memorySizeOf,
  type FunctionFailure,
  type FunctionRuntime,
} from '../../local/functions';
import { FUNCTIONS_DIR, PROJECT_ROOT } from '../../shared/facts/project-layout';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import { stages } from '../../infra/stages';
import { captureOutput } from '../helpers/output';
import { startGate } from '../helpers/gate';

/** The local function runtime's Lambda behaviour: its timeout and what a timeout does to the instance. */

// Inside the project, so the bundle resolves packages from its node_modules like the real ones.
const root = resolve(import.meta.dirname, '../../.build', `runtime-test-${process.pid}`);
const TIMEOUT_MS = 300;
let runtime: FunctionRuntime;
let framed: FunctionRuntime;

beforeAll(async () => {
  await mkdir(join(root, FUNCTIONS_DIR), { recursive: true });
  await writeFile(
    join(root, FUNCTIONS_DIR, 'clock.ts'),
    [
      '// Which module instance answered: a cold start makes a new one.',
      'const instance = Math.random();',
      '// Loads fetch at cold start, which no timeout covers, so that an invocation that fetches starts at once.',
      "await fetch('data:,');",
      'type Event = { hang?: boolean; waitFor?: string };',
      'export const handler = async (event: Event, context: { getRemainingTimeInMillis(): number }) => {',
      '  if (event.hang) await new Promise(() => undefined);',
      '  if (event.waitFor) await (await fetch(event.waitFor)).text();',
      '  return { instance, remaining: context.getRemainingTimeInMillis() };',
      '};',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(root, FUNCTIONS_DIR, 'hog.ts'),
    [
      "import { getHeapStatistics } from 'node:v8';",
      'const instance = Math.random();',
      "await fetch('data:,');",
      'type Event = { waitFor?: string; exhaust?: boolean };',
      'export const handler = async (event: Event, context: { memoryLimitInMB: string }) => {',
      '  if (event.waitFor) await (await fetch(event.waitFor)).text();',
      '  // Keeps everything it allocates, until the heap can hold no more.',
      '  const kept: number[][] = [];',
      '  while (event.exhaust) kept.push(new Array(1_000_000).fill(kept.length));',
      '  return { instance, memoryLimitInMB: Number(context.memoryLimitInMB), heapLimitMiB: getHeapStatistics().heap_size_limit / 2 ** 20 };',
      '};',
      '',
    ].join('\n'),
  );
  await writeFile(
    join(root, FUNCTIONS_DIR, 'whoami.ts'),
    'export const handler = async (_event: unknown, context: { awsRequestId: string }) => context.awsRequestId;\n',
  );
  await writeFile(join(root, FUNCTIONS_DIR, 'stage.ts'), 'export const handler = async () => process.env.STAGE_NAME ?? null;\n');
  await writeFile(
    join(root, FUNCTIONS_DIR, 'talk.ts'),
    [
      `import { writeLine } from ${JSON.stringify(join(PROJECT_ROOT, 'shared/runtime/output.ts'))};`,
      "writeLine('stdout', 'cold start');",
      'export const handler = async (event: { lines: number }) => {',
      '  for (let i = 0; i < event.lines; i++) {',
      "    writeLine('stdout', 'line ' + i);",
      "    console.log('console ' + i);",
      '  }',
      "  writeLine('stderr', 'warned');",
      "  console.error('console warned');",
      "  return 'answered';",
      '};',
      '',
    ].join('\n'),
  );
  runtime = await createFunctionRuntime({ sourceRoot: root, timeoutMs: TIMEOUT_MS });
  // Writes START and REPORT, which the tests' SYSTEM_LOG_LEVEL (WARN) leaves out elsewhere.
  framed = await createFunctionRuntime({ sourceRoot: root, timeoutMs: TIMEOUT_MS, systemLogLevel: 'INFO' });
});
afterAll(async () => {
  await runtime?.close();
  await framed?.close();
  await rm(root, { recursive: true, force: true });
});

type Answer = { instance: number; remaining: number };
type HogAnswer = { instance: number; memoryLimitInMB: number; heapLimitMiB: number };

describe('the local function runtime', () => {
  it("tells the handler the time left before the function's timeout", async () => {
    const { remaining } = (await runtime.invoke('clock', {})) as Answer;
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(TIMEOUT_MS);
  });

  it('reuses a warm instance between invocations', async () => {
    const first = (await runtime.invoke('clock', {})) as Answer;
    const second = (await runtime.invoke('clock', {})) as Answer;
    expect(second.instance).toBe(first.instance);
  });

  it('fails an invocation that outlives the timeout, as Lambda does, and answers the next one from a fresh instance', async () => {
    const before = (await runtime.invoke('clock', {})) as Answer;
    const started = performance.now();
    await expect(runtime.invoke('clock', { hang: true })).rejects.toBeInstanceOf(FunctionTimeoutError);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + 1_000);
    const after = (await runtime.invoke('clock', {})) as Answer;
    expect(after.instance).not.toBe(before.instance);
  });

  it("writes what a function writes, its own lines and its console's, through this process's writer, in order and ahead of the answer", async () => {
    const output = captureOutput({ silent: true });
    let seen: { stdout: string[]; stderr: string[] };
    try {
      expect(await framed.invoke('talk', { lines: 500 })).toBe('answered');
      seen = structuredClone(output.byStream);
    } finally {
      output.stop();
    }
    const lines = Array.from({ length: 500 }, (_, i) => [`line ${i}`, `console ${i}`]).flat();
    // Between the runtime's own START and REPORT lines, as on Lambda; its cold start's before them.
    const platform = (line: string) => /"type":"platform\.(\w+)"/.exec(line)?.[1];
    expect(seen.stdout.map((line) => platform(line) ?? line)).toEqual(['cold start', 'start', ...lines, 'report']);
    expect(seen.stderr).toEqual(['warned', 'console warned']);
  });

  it("frames each invocation with Lambda's platform lines: its request id, its duration, the init duration on a cold start only, and memory", async () => {
    const output = captureOutput({ silent: true });
    const requestIds: unknown[] = [];
    try {
      for (let i = 0; i < 2; i++) requestIds.push(await framed.invoke('whoami', {}));
      await expect(framed.invoke('clock', { hang: true })).rejects.toBeInstanceOf(FunctionTimeoutError);
    } finally {
      output.stop();
    }
    const platform = output.json().filter((entry) => String(entry.type).startsWith('platform.')) as Array<Record<string, any>>;
    const ofWhoami = platform.filter((entry) => entry.function === 'whoami');
    expect(ofWhoami.map((entry) => [entry.type, entry.record.requestId])).toEqual(
      requestIds.flatMap((id) => [
        ['platform.start', id],
        ['platform.report', id],
      ]),
    );
    const [cold, warm] = ofWhoami.filter((entry) => entry.type === 'platform.report').map((entry) => entry.record);
    for (const report of [cold, warm]) {
      expect(report.status).toBe('success');
      expect(report.metrics).toEqual(
        expect.objectContaining({
          durationMs: expect.any(Number),
          memorySizeMB: memorySizeOf('whoami'),
          maxMemoryUsedMB: expect.any(Number),
        }),
      );
      expect(report.metrics.maxMemoryUsedMB).toBeGreaterThan(0);
      expect(report.metrics.maxMemoryUsedMB).toBeLessThanOrEqual(memorySizeOf('whoami'));
    }
    expect(cold.metrics.initDurationMs).toBeGreaterThan(0);
    expect(warm.metrics).not.toHaveProperty('initDurationMs');
    const timedOut = platform.find((entry) => entry.function === 'clock' && entry.type === 'platform.report');
    expect(timedOut?.record.status).toBe('timeout');
  });

  it('writes no START or REPORT line at system log level WARN, as Lambda does', async () => {
    const quiet = await createFunctionRuntime({ sourceRoot: root, timeoutMs: TIMEOUT_MS, systemLogLevel: 'WARN' });
    const output = captureOutput({ silent: true });
    let answer: unknown;
    try {
      answer = await quiet.invoke('whoami', {});
    } finally {
      output.stop();
      await quiet.close();
    }
    expect(answer).toEqual(expect.any(String));
    expect(output.json().filter((entry) => String(entry.type).startsWith('platform.'))).toEqual([]);
  });

  it('gives each instance the environment it is configured with, as Lambda does, and leaves this process its own', async () => {
    const blue = await createFunctionRuntime({ sourceRoot: root, environment: { STAGE_NAME: 'blue' } });
    const green = await createFunctionRuntime({ sourceRoot: root, environment: { STAGE_NAME: 'green' } });
    try {
      expect(await Promise.all([blue.invoke('stage', {}), green.invoke('stage', {})])).toEqual(['blue', 'green']);
      expect(process.env.STAGE_NAME).toBeUndefined();
    } finally {
      await Promise.all([blue.close(), green.close()]);
    }
  });

  it('runs concurrent invocations of a function in instances of their own, and reuses an idle one', async () => {
    const concurrent = (await Promise.all(Array.from({ length: 3 }, () => runtime.invoke('clock', {})))) as Answer[];
    const instances = new Set(concurrent.map((answer) => answer.instance));
    expect(instances.size).toBe(3);
    const next = (await runtime.invoke('clock', {})) as Answer;
    expect(instances).toContain(next.instance);
  });

  it('fails only the invocation that outlives the timeout: ten neighbours in flight on the same function all answer', async () => {
    const gate = await startGate();
    const timeoutMs = 5_000;
    const busy = await createFunctionRuntime({ sourceRoot: root, timeoutMs, maxInstances: 11 });
    try {
      // Eleven warm instances, so that the neighbours reach the gate at once however slow a cold start is.
      const warming = (await Promise.all(Array.from({ length: 11 }, () => busy.invoke('clock', {})))) as Answer[];
      const warm = new Set(warming.map((answer) => answer.instance));
      expect(warm.size).toBe(11);

      const stuck = busy.invoke('clock', { hang: true }).then(
        () => 'answered',
        (error: unknown) => error,
      );
      // Later than the stuck one, so that the neighbours' own timeouts come well after its.
      await new Promise((resolve) => setTimeout(resolve, timeoutMs / 3));
      const neighbours = Array.from({ length: 10 }, () =>
        busy.invoke('clock', { waitFor: gate.url }).then(
          (answer) => answer as Answer,
          (error: unknown) => error,
        ),
      );
      await expect.poll(gate.waiting, { timeout: timeoutMs / 2 }).toBe(10);
      expect(await stuck).toBeInstanceOf(FunctionTimeoutError);
      // All ten were in flight when the stuck one was cut off.
      expect(gate.waiting()).toBe(10);
      gate.open();
      const answers = await Promise.all(neighbours);
      expect(answers.filter((answer) => answer instanceof Error)).toEqual([]);
      expect(new Set(answers.map((answer) => (answer as Answer).instance)).size).toBe(10);
      for (const answer of answers) expect(warm).toContain((answer as Answer).instance);
    } finally {
      gate.open();
      await busy.close();
      await gate.close();
    }
  }, 120_000);

  it("starts a waiting invocation's timeout when it runs, as Lambda does, not when it was made", async () => {
    const [first, second] = await Promise.all([startGate(), startGate()]);
    const timeoutMs = 3_000;
    const single = await createFunctionRuntime({ sourceRoot: root, timeoutMs, maxInstances: 1 });
    try {
      const running = single.invoke('clock', { waitFor: first.url });
      await expect.poll(first.waiting, { timeout: 30_000 }).toBe(1);
      const waiting = single.invoke('clock', { waitFor: second.url });
      await new Promise((resolve) => setTimeout(resolve, timeoutMs * (2 / 3)));
      first.open();
      await running;
      await expect.poll(second.waiting, { timeout: timeoutMs / 3 }).toBe(1);
      // Made more than a timeout ago, but running for half of one.
      await new Promise((resolve) => setTimeout(resolve, timeoutMs / 2));
      second.open();
      expect(((await waiting) as Answer).remaining).toBeGreaterThan(0);
    } finally {
      first.open();
      second.open();
      await single.close();
      await Promise.all([first.close(), second.close()]);
    }
  });

  it('makes an invocation beyond the instance limit wait for a free instance rather than fail', async () => {
    const gate = await startGate();
    const limited = await createFunctionRuntime({ sourceRoot: root, timeoutMs: 5_000, maxInstances: 2 });
    try {
      const invocations = Array.from({ length: 4 }, () => limited.invoke('clock', { waitFor: gate.url }) as Promise<Answer>);
      await expect.poll(gate.waiting, { timeout: 30_000 }).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(gate.waiting()).toBe(2);
      gate.open();
      const answers = await Promise.all(invocations);
      expect(new Set(answers.map((answer) => answer.instance)).size).toBe(2);
    } finally {
      gate.open();
      await limited.close();
      await gate.close();
    }
  });

  it("bounds each instance's heap by its function's memory size, which its context reports, as Lambda does", async () => {
    const { memoryLimitInMB, heapLimitMiB } = (await runtime.invoke('hog', {})) as HogAnswer;
    expect(memoryLimitInMB).toBeGreaterThan(0);
    expect(heapLimitMiB).toBeLessThanOrEqual(memoryLimitInMB);
  });

  it('gives each deployed function the smallest memory size a stage deploys it with, so what fits locally fits everywhere', () => {
    for (const name of API_FUNCTIONS) {
      const deployed = stages.map((stage) => stage.memoryMiB[name]);
      expect(deployed).toContain(memorySizeOf(name));
      for (const memoryMiB of deployed) expect(memorySizeOf(name)).toBeLessThanOrEqual(memoryMiB);
    }
  });

  it('fails an invocation that runs out of memory, as Lambda does, and discards its instance alone: a neighbour in flight answers', async () => {
    const [warming, neighbourGate, lastGate] = await Promise.all([startGate(), startGate(), startGate()]);
    const pair = await createFunctionRuntime({ sourceRoot: root, timeoutMs: 30_000, maxInstances: 2 });
    try {
      const both = Array.from({ length: 2 }, () => pair.invoke('hog', { waitFor: warming.url }) as Promise<HogAnswer>);
      await expect.poll(warming.waiting, { timeout: 30_000 }).toBe(2);
      warming.open();
      const warm = new Set((await Promise.all(both)).map((answer) => answer.instance));
      expect(warm.size).toBe(2);

      const neighbour = pair.invoke('hog', { waitFor: neighbourGate.url }) as Promise<HogAnswer>;
      await expect.poll(neighbourGate.waiting, { timeout: 30_000 }).toBe(1);
      await expect(pair.invoke('hog', { exhaust: true })).rejects.toBeInstanceOf(FunctionOutOfMemoryError);
      neighbourGate.open();
      const survivor = (await neighbour).instance;
      expect(warm).toContain(survivor);

      // Two at once: the survivor, and a cold start in place of the instance that ran out.
      const last = Array.from({ length: 2 }, () => pair.invoke('hog', { waitFor: lastGate.url }) as Promise<HogAnswer>);
      await expect.poll(lastGate.waiting, { timeout: 30_000 }).toBe(2);
      lastGate.open();
      const instances = (await Promise.all(last)).map((answer) => answer.instance);
      expect(instances).toContain(survivor);
      expect(instances.filter((instance) => !warm.has(instance))).toHaveLength(1);
    } finally {
      for (const gate of [warming, neighbourGate, lastGate]) gate.open();
      await pair.close();
      await Promise.all([warming.close(), neighbourGate.close(), lastGate.close()]);
    }
  }, 60_000);

  it('ends an instance idle for longer than the idle lifetime, as Lambda does, so the next invocation is a cold start', async () => {
    const idleLifetimeMs = 500;
    const brief = await createFunctionRuntime({ sourceRoot: root, idleLifetimeMs });
    try {
      const first = (await brief.invoke('clock', {})) as Answer;
      const warm = (await brief.invoke('clock', {})) as Answer;
      expect(warm.instance).toBe(first.instance);
      await new Promise((resolve) => setTimeout(resolve, idleLifetimeMs * 3));
      const after = (await brief.invoke('clock', {})) as Answer;
      expect(after.instance).not.toBe(first.instance);
    } finally {
      await brief.close();
    }
  });

  it("tells each failure in a line naming the function, as Lambda's log does: a timeout, a heap run out, an instance that exits", async () => {
    await writeFile(join(root, FUNCTIONS_DIR, 'quit.ts'), 'export const handler = async () => process.exit(3);\n');
    const failures: FunctionFailure[] = [];
    const onFunctionError = (failure: FunctionFailure) => failures.push(failure);
    // A short timeout for the one that hangs; a long one for the others, so that a slow machine still sees them fail their own way.
    const hurried = await createFunctionRuntime({ sourceRoot: root, timeoutMs: 1_000, onFunctionError });
    const telling = await createFunctionRuntime({ sourceRoot: root, timeoutMs: 30_000, onFunctionError });
    try {
      await expect(hurried.invoke('clock', { hang: true })).rejects.toBeInstanceOf(FunctionTimeoutError);
      await expect(telling.invoke('hog', { exhaust: true })).rejects.toBeInstanceOf(FunctionOutOfMemoryError);
      await expect(telling.invoke('quit', {})).rejects.toThrow(/exited/);
      expect(failures).toEqual([
        { function: 'clock', phase: 'timeout', message: 'clock: Task timed out after 1.00 seconds' },
        {
          function: 'hog',
          phase: 'out-of-memory',
          message: 'hog: Runtime exited with error: JavaScript heap out of memory (memory size 128 MB)',
        },
        { function: 'quit', phase: 'exit', message: 'quit: Runtime exited with error: exit status 3' },
      ]);
    } finally {
      await Promise.all([hurried.close(), telling.close()]);
    }
  }, 60_000);

  it('ends every invocation when it closes, the running and the waiting alike, rather than leaving them hanging', async () => {
    const gate = await startGate();
    const closing = await createFunctionRuntime({ sourceRoot: root, timeoutMs: 30_000, maxInstances: 1 });
    try {
      const running = expect(closing.invoke('clock', { waitFor: gate.url })).rejects.toThrow(/exited/);
      await expect.poll(gate.waiting, { timeout: 30_000 }).toBe(1);
      const waiting = expect(closing.invoke('clock', {})).rejects.toThrow(/closed/);
      await closing.close();
      await running;
      await waiting;
    } finally {
      gate.open();
      await gate.close();
    }
  });
});
