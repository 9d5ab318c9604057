import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFunctionRuntime } from '../../local/functions';
import { startGate } from '../helpers/gate';

// Inside the project, so the bundles resolve packages from its node_modules like the real ones.
const root = resolve(import.meta.dirname, '../../.build', `watch-test-${process.pid}`);
afterAll(() => rm(root, { recursive: true, force: true }));

async function writeSource(path: string, text: string) {
  await mkdir(join(root, path, '..'), { recursive: true });
  await writeFile(join(root, path), text);
}

/** Saves as vim, `sed -i` and JetBrains' safe write do: a temporary file renamed over the original. */
async function saveAtomically(path: string, text: string) {
  const temporary = join(root, `${path}.tmp-${Date.now()}`);
  await writeFile(temporary, text);
  await rename(temporary, join(root, path));
}

describe('watch mode', () => {
  it('serves the new code of a handler after its source, or a shared module it imports, changes', async () => {
    await writeSource('shared/lib/greeting.ts', "export const greeting = 'hello';\n");
    await writeSource(
      'functions/greet.ts',
      "import { greeting } from '../shared/lib/greeting';\nexport const handler = async () => greeting;\n",
    );
    const reloaded: string[] = [];
    const runtime = await createFunctionRuntime({ watch: true, sourceRoot: root, onReload: (file) => reloaded.push(file) });
    try {
      expect(await runtime.invoke('greet', {})).toBe('hello');

      await writeSource('shared/lib/greeting.ts', "export const greeting = 'hello again';\n");
      await expect.poll(() => reloaded, { timeout: 5_000 }).toContain(join('shared', 'lib', 'greeting.ts'));
      expect(await runtime.invoke('greet', {})).toBe('hello again');
    } finally {
      await runtime.close();
    }
  });

  it('keeps seeing a file after it is saved atomically (a temporary file renamed over it), then edited again', async () => {
    await writeSource('shared/lib/word.ts', "export const word = 'one';\n");
    await writeSource('functions/say.ts', "import { word } from '../shared/lib/word';\nexport const handler = async () => word;\n");
    const runtime = await createFunctionRuntime({ watch: true, sourceRoot: root });
    try {
      expect(await runtime.invoke('say', {})).toBe('one');
      await saveAtomically('shared/lib/word.ts', "export const word = 'two';\n");
      await expect.poll(() => runtime.invoke('say', {}), { timeout: 5_000 }).toBe('two');
      await saveAtomically('shared/lib/word.ts', "export const word = 'three';\n");
      await expect.poll(() => runtime.invoke('say', {}), { timeout: 5_000 }).toBe('three');
      await writeSource('shared/lib/word.ts', "export const word = 'four';\n");
      await expect.poll(() => runtime.invoke('say', {}), { timeout: 5_000 }).toBe('four');
    } finally {
      await runtime.close();
    }
  });

  it('lets a busy instance finish its invocation with the code it has, while the next invocations get the new code', async () => {
    const gate = await startGate();
    await writeSource('shared/lib/version.ts', "export const version = 'old';\n");
    await writeSource(
      'functions/versioned.ts',
      [
        "import { version } from '../shared/lib/version';",
        'export const handler = async (event: { waitFor?: string }) => {',
        '  if (event.waitFor) await (await fetch(event.waitFor)).text();',
        '  return version;',
        '};',
        '',
      ].join('\n'),
    );
    const reloaded: string[] = [];
    const runtime = await createFunctionRuntime({ watch: true, sourceRoot: root, onReload: (file) => reloaded.push(file) });
    try {
      const busy = runtime.invoke('versioned', { waitFor: gate.url });
      await expect.poll(gate.waiting, { timeout: 30_000 }).toBe(1);
      await writeSource('shared/lib/version.ts', "export const version = 'new';\n");
      await expect.poll(() => reloaded, { timeout: 5_000 }).toContain(join('shared', 'lib', 'version.ts'));
      expect(await runtime.invoke('versioned', {})).toBe('new');
      gate.open();
      expect(await busy).toBe('old');
      expect(await Promise.all([runtime.invoke('versioned', {}), runtime.invoke('versioned', {})])).toEqual(['new', 'new']);
    } finally {
      gate.open();
      await runtime.close();
      await gate.close();
    }
  });

  it('keeps serving the loaded code when watching is off', async () => {
    await writeSource('functions/fixed.ts', 'export const handler = async () => 1;\n');
    const runtime = await createFunctionRuntime({ sourceRoot: root });
    try {
      expect(await runtime.invoke('fixed', {})).toBe(1);
      await writeSource('functions/fixed.ts', 'export const handler = async () => 2;\n');
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await runtime.invoke('fixed', {})).toBe(1);
    } finally {
      await runtime.close();
    }
  });
});
