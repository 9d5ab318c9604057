import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { repositoryFiles } from '../helpers/import-graph';
import { anchorsOf, headingsOf } from '../helpers/markdown';

/**
 * Code, configuration and documents point readers at a section of docs/ as `docs/x.md, "Heading"` or
 * `docs/x.md#anchor`: each must lead to a heading the document has, so renaming a heading without its
 * references fails here rather than sending a reader nowhere.
 */

/** What we write: code, configuration and prose (npm writes the lockfile). */
const WRITTEN = /\.(ts|mts|mjs|md|json|jsonc|yaml|yml)$|^run$/;

function writtenFiles(): string[] {
  return repositoryFiles(PROJECT_ROOT, (name) => WRITTEN.test(name) && name !== 'package-lock.json');
}

/** A reference to a section of a document, and where it stands. */
interface SectionReference {
  readonly file: string;
  readonly document: string;
  readonly heading?: string;
  readonly anchor?: string;
}

/**
 * The section references of a text. A reference may wrap across lines of a comment, so comment
 * leaders (` * `, `// `, `# `) at a line's start are read as a space.
 */
function sectionReferences(file: string, text: string): SectionReference[] {
  const joined = text.replace(/\n[ \t]*(?:\*(?!\/)|\/\/|#(?!#))?[ \t]*/g, ' ');
  const byHeading = [...joined.matchAll(/docs\/([\w-]+\.md),\s+["'“]([^"'”]+)["'”]/g)].map((match) => ({
    file,
    document: `docs/${match[1]}`,
    heading: match[2]!,
  }));
  const byAnchor = [...joined.matchAll(/docs\/([\w-]+\.md)#([\w-]+)/g)].map((match) => ({
    file,
    document: `docs/${match[1]}`,
    anchor: match[2]!,
  }));
  return [...byHeading, ...byAnchor];
}

/** What is wrong with each reference: its document missing, or no heading of that text or anchor. */
function unresolved(references: readonly SectionReference[], read: (document: string) => string | undefined): string[] {
  return references.flatMap((reference) => {
    const markdown = read(reference.document);
    const target = reference.heading === undefined ? `#${reference.anchor}` : `"${reference.heading}"`;
    if (markdown === undefined) return [`${reference.file}: ${reference.document} ${target}: no such document`];
    const found =
      reference.heading === undefined ? anchorsOf(markdown).has(reference.anchor!) : headingsOf(markdown).includes(reference.heading);
    return found ? [] : [`${reference.file}: ${reference.document} ${target}: no such heading`];
  });
}

function readDocument(document: string): string | undefined {
  const path = join(PROJECT_ROOT, document);
  return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
}

describe('references to a section of docs/', () => {
  // This file's own references are made up, to show the check refuses them.
  const references = writtenFiles()
    .filter((file) => file !== 'test/project/cross-references.test.ts')
    .flatMap((file) => sectionReferences(file, readFileSync(join(PROJECT_ROOT, file), 'utf8')));

  it('are read from the repository, one that wraps across comment lines included', () => {
    // infra/stages.ts wraps its reference to the authorizer's reserved concurrency across two comment lines.
    expect(references).toContainEqual({
      file: 'infra/stages.ts',
      document: 'docs/operations.md',
      heading: 'Reserved concurrency for the authorizer',
    });
  });

  it('each lead to a heading their document has', () => {
    expect(unresolved(references, readDocument)).toEqual([]);
  });

  it('are refused when the document or the heading is missing, a reference wrapped across comment lines included', () => {
    const code = [
      '/**',
      ' * Reserves concurrency (docs/operations.md,',
      ' * "Reserved concurrency") and restores (docs/operations.md, "Restoring the pets table").',
      ' */',
      "// See docs/nowhere.md, 'Anything' and docs/operations.md#no-such-step.",
    ].join('\n');
    const documents: Record<string, string> = { 'docs/operations.md': '# Operations\n## Restoring the pets table\n' };
    expect(unresolved(sectionReferences('infra/made-up.ts', code), (document) => documents[document])).toEqual([
      'infra/made-up.ts: docs/operations.md "Reserved concurrency": no such heading',
      'infra/made-up.ts: docs/nowhere.md "Anything": no such document',
      'infra/made-up.ts: docs/operations.md #no-such-step: no such heading',
    ]);
  });
});

/**
 * The repository paths a text cites, as `infra/stages.ts` or `docs/`: a path from one of the top folders,
 * to a file of a kind we write or to a folder (a trailing `/`). Relative ones (`../shared/x.ts`) are the
 * imports' and the links' to check.
 */
function citedPaths(text: string): string[] {
  const cited =
    /(?<![\w./-])(?:functions|shared|infra|local|tools|test|docs)\/(?:[\w.-]+\/)*(?:[\w.-]+\.(?:ts|mts|mjs|md|json|jsonc|yaml|yml)\b|(?![\w.-]))/g;
  return [...text.matchAll(cited)].map((match) => match[0]);
}

describe('repository paths cited in code, configuration and docs', () => {
  // Tests make up paths on purpose, in fixtures and temporary checkouts, to show a check refuses them.
  const citing = writtenFiles().filter((file) => !file.startsWith('test/'));

  it('are read from the repository, a comment of a configuration file included', () => {
    const cited = citing.flatMap((file) => citedPaths(readFileSync(join(PROJECT_ROOT, file), 'utf8')).map((path) => `${file}: ${path}`));
    // .spectral.yaml's header names the test that runs Spectral.
    expect(cited).toContain('.spectral.yaml: test/shared/contract/openapi-document.test.ts');
  });

  it('each exist', () => {
    const missing = citing.flatMap((file) =>
      citedPaths(readFileSync(join(PROJECT_ROOT, file), 'utf8'))
        .filter((path) => !existsSync(join(PROJECT_ROOT, path)))
        .map((path) => `${file}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('are a file or a folder from a top folder, relative paths and other kinds of file set aside', () => {
    const text = '# Spectral runs in test/openapi/spectral.test.ts (see docs/, not ../shared/x.ts, nor tools/run.sh).';
    expect(citedPaths(text)).toEqual(['test/openapi/spectral.test.ts', 'docs/']);
  });
});

describe('files of ours', () => {
  it('name no issue: what a change was for belongs in its commit, not in the files', () => {
    const naming = writtenFiles()
      .filter((file) => file !== 'test/project/cross-references.test.ts')
      .filter((file) => /\bissues? #?\d+\b/i.test(readFileSync(join(PROJECT_ROOT, file), 'utf8')));
    expect(naming).toEqual([]);
  });
});
