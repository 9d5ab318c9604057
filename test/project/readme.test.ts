import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { anchorsOf, proseLines } from '../helpers/markdown';

/**
 * The README is the front door and docs/ the rooms behind it: the README opens with what a fresh machine
 * needs, and every link in either leads somewhere inside the repository.
 */

/** The README and every doc, as paths from the repository's root. */
const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The top folders whose paths the documents cite in code spans (`shared/runtime/output.ts`). */
const CITED_FOLDERS = ['functions', 'shared', 'infra', 'local', 'tools', 'test', 'docs'];

function read(path: string): string {
  return readFileSync(join(PROJECT_ROOT, path), 'utf8');
}

/** The targets of a document's inline links and images, code spans set aside. */
function linkTargets(markdown: string): string[] {
  const prose = proseLines(markdown).join('\n');
  return [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((match) => match[1] as string);
}

/** What is wrong with each link of the document at `path` that is not to the web; empty when every one holds. */
function brokenLinks(path: string, markdown: string): string[] {
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^(https?|mailto):/i.test(target)) continue;
    const [file = '', anchor] = decodeURIComponent(target).split('#');
    if (file === '') {
      if (!anchorsOf(markdown).has(anchor ?? '')) broken.push(`${target}: no heading with that anchor`);
      continue;
    }
    const resolved = resolve(PROJECT_ROOT, dirname(path), file);
    const fromRoot = relative(PROJECT_ROOT, resolved);
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || isAbsolute(file) || fromRoot.startsWith('..') || isAbsolute(fromRoot)) {
      broken.push(`${target}: outside the repository`);
    } else if (!existsSync(resolved)) {
      broken.push(`${target}: no such file`);
    } else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
      broken.push(`${target}: no heading with that anchor`);
    }
  }
  return broken;
}

describe('the README', () => {
  const readme = read('README.md');

  it('opens with the two commands a fresh machine needs: one serves the API, one runs the tests', () => {
    const firstBlock = /```\w*\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    const commands = firstBlock
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter(Boolean);
    expect(commands).toEqual(['npm install && npm start', 'npm test']);
  });
});

describe('links in the README and docs/', () => {
  it.each(DOCUMENTS)('%s links only to files inside the repository, and to headings they have', (path) => {
    const markdown = read(path);
    expect(brokenLinks(path, markdown)).toEqual([]);
  });

  it('lead from the README to every doc', () => {
    const targets = new Set(linkTargets(read('README.md')).map((target) => target.split('#')[0]));
    expect(DOCUMENTS.filter((path) => path !== 'README.md' && !targets.has(path))).toEqual([]);
  });

  it('are refused when they lead outside the repository, to a missing file or to a missing heading', () => {
    const markdown = [
      '# Runbook',
      '[spec](../../shared/spec/animal-store-interface.md) [gone](missing.md) [rollback](operations.md#no-such-step)',
      '[here](#runbook) [rfc](https://www.rfc-editor.org/rfc/rfc8288) [readme](../README.md)',
      '```',
      '[in code](nowhere.md)',
      '```',
    ].join('\n');
    expect(brokenLinks('docs/probe.md', markdown)).toEqual([
      '../../shared/spec/animal-store-interface.md: outside the repository',
      'missing.md: no such file',
      'operations.md#no-such-step: no heading with that anchor',
    ]);
  });
});

describe('paths the README and docs/ cite in code', () => {
  it.each(DOCUMENTS)('%s cites only repository paths that exist', (path) => {
    const cited = proseLines(read(path))
      .flatMap((line) => [...line.matchAll(/`([^`\s]+)`/g)].map((match) => match[1] as string))
      .map((span) => span.replace(/(:\d+)+$/, ''))
      .filter((span) => CITED_FOLDERS.some((folder) => span.startsWith(`${folder}/`)));
    expect(cited.filter((span) => !existsSync(join(PROJECT_ROOT, span)))).toEqual([]);
  });
});
