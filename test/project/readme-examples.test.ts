import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerProcess, type RunningServer } from '../helpers/cli';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';

/**
 * The README's examples, pasted in order as a reader would, against a running `npm start`: each
 * promised answer (`→ 201`, `→ 200`, …) is the one the reader sees, and the shell examples write
 * nothing where they are pasted (a reader's checkout, whose next `npm test` lints every file in it).
 */
const README = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');

/** The fenced blocks of one language in the section under a heading (up to the next heading of its level or above). */
function blocksUnder(heading: string, language: string): string[] {
  const level = heading.indexOf(' ');
  const blocks: string[] = [];
  let inSection = false;
  let fence: string[] | undefined;
  let fenceLanguage = '';
  for (const line of README.split('\n')) {
    if (fence) {
      if (line.startsWith('```')) {
        if (inSection && fenceLanguage === language) blocks.push(fence.join('\n'));
        fence = undefined;
      } else {
        fence.push(line);
      }
    } else if (line.startsWith('```')) {
      fence = [];
      fenceLanguage = line.slice(3).trim();
    } else if (/^#{1,6} /.test(line)) {
      if (line === heading) inSection = true;
      else if (inSection && line.indexOf(' ') <= level) break;
    }
  }
  if (blocks.length === 0) throw new Error(`No ${language} block under ${heading} in README.md`);
  return blocks;
}

const execFileAsync = promisify(execFile);
let server: RunningServer;
/** Where the reader pastes the shell examples: empty, and to stay so. */
let work: string;

/** Runs a README bash block with the reader's KEY and BASE already set, as the first block sets them. */
async function paste(block: string): Promise<string> {
  const script = block.replace(/^KEY=.*$/m, `KEY='${server.apiKey}'`).replace(/^BASE=.*$/m, `BASE='${server.baseUrl}'`);
  const { stdout } = await execFileAsync(
    'bash',
    ['-euo', 'pipefail', '-c', `KEY='${server.apiKey}'\nBASE='${server.baseUrl}'\n${script}`],
    {
      cwd: work,
    },
  );
  return stdout;
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'animal-store-readme-'));
  server = await startServerProcess({ DEV_API_KEY: 'readme-examples-key-0123456789' });
});
afterAll(async () => {
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the README, pasted in order', () => {
  let calls: string;
  beforeAll(async () => {
    [calls] = blocksUnder('## Calling the API', 'bash') as [string];
  });

  it('answers each curl with the status its comment promises', async () => {
    const promised = [...calls.matchAll(/→ (\d{3})/g)].map((match) => Number(match[1]));
    expect(promised.length).toBeGreaterThan(2);
    const output = await paste(calls);
    expect(readdirSync(work)).toEqual([]);
    const answered = [...output.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
    expect(answered).toEqual(promised);
    expect(output).toContain('"code":"invalid_parameter"');
    expect(output).toMatch(/^deprecation: @\d+/im);
  });

  it('reads every page with the curl loop, each pet once', async () => {
    const [loop] = blocksUnder('### Reading every page', 'bash') as [string];
    const output = await paste(loop);
    expect(readdirSync(work)).toEqual([]);
    const pages = output
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Array<{ id: number }>);
    const ids = pages.flat().map((pet) => pet.id);
    expect(pages.length).toBeGreaterThan(1);
    expect(new Set(ids).size).toBe(ids.length);
    const all = (await (
      await fetch(`${server.baseUrl}/pets?limit=100`, { headers: { authorization: `Bearer ${server.apiKey}` } })
    ).json()) as unknown[];
    expect(ids).toHaveLength(all.length);
  });
});
