import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { apiThrottle, production, staging, stages } from '../../infra/stages';
import { API_FUNCTIONS, FUNCTION_NAMES, fileNameOf } from '../../shared/facts/function-names';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { LISTING } from '../../shared/facts/listing';
import { OPERATION_IDS } from '../../shared/facts/routes';
import { anchorsOf, proseLines, sectionOf } from '../helpers/markdown';
import { DEFAULT_DYNAMODB_PORT } from '../../local/dynamodb-local';
import { DEFAULT_PORT } from '../../local/listen';

/**
 * The README is the front door and docs/ the rooms behind it: the README opens with what a fresh machine
 * needs, every link in either leads somewhere inside the repository, and the figures and names they
 * copy from the code are the code's.
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

  it("names the settings that move npm start's two ports, with their defaults, where it says how to start the API", () => {
    const calling = sectionOf(readme, 'Calling the API').join('\n');
    expect(calling).toContain(
      `\`npm start\` listens on port ${DEFAULT_PORT} and runs its embedded DynamoDB on port ${DEFAULT_DYNAMODB_PORT}`,
    );
    expect(calling).toMatch(/`PORT` and `DYNAMODB_PORT`/);
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
      .filter((span) => CITED_FOLDERS.some((folder) => span.startsWith(`${folder}/`)))
      // A `<file>` placeholder names a file to write, after a pattern: its folder must exist.
      .map((span) => (/<\w+>/.test(span) ? dirname(span) : span));
    expect(cited.filter((span) => !existsSync(join(PROJECT_ROOT, span)))).toEqual([]);
  });
});

/** A document as one line, so a sentence reads the same however it wraps. */
function flowing(path: string): string {
  return read(path).replace(/\s+/g, ' ');
}

/** The code spans of a line, in order. */
function codeSpans(line: string): string[] {
  return [...line.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
}

/** The one line of a document that `starts` a row or a list item; undefined when none or several do. */
function lineStarting(markdown: string, starts: string): string | undefined {
  const found = proseLines(markdown).filter((line) => line.trimStart().startsWith(starts));
  return found.length === 1 ? found[0] : undefined;
}

/** The cells of a table row, without the row's outer pipes. */
function cellsOf(row: string | undefined): string[] {
  return (row ?? '')
    .split('|')
    .slice(1, -1)
    .map((cell) => cell.trim());
}

/** Where every doc sends the reader for the throttle's figures, which `npm run costs` renders from infra/stages.ts. */
const THROTTLE_FIGURES = 'costs.md#the-most-a-stage-can-cost-in-a-day';

/** The creates a second one listing shard takes: a partition's 1,000 writes, a create one entry in it (shared/facts/listing.ts). */
const CREATES_PER_SHARD = 1_000;

describe("the stages' throttle in the docs", () => {
  // Stated once, rendered, so an operation with its own share changes no hand-written doc.
  it("is each stage's in costs.md, its routes' shares added up as infra/stages.ts adds them (apiThrottle)", () => {
    const costs = flowing('docs/costs.md');
    for (const stage of stages) {
      const { rateLimit, burstLimit } = apiThrottle(stage);
      expect(costs).toContain(`**${stage.name}**: its throttle admits at most ${rateLimit} requests/s (burst ${burstLimit})`);
    }
  });

  it("is found from the runbook's stage table and from the 429 row of error-codes.md", () => {
    const row = cellsOf(lineStarting(sectionOf(read('docs/operations.md'), 'What differs between the stages').join('\n'), '| Throttle'));
    expect(row.slice(1)).toEqual(stages.map((stage) => `${stage.name}'s, in [costs.md](${THROTTLE_FIGURES})`));
    const tooMany = cellsOf(lineStarting(read('docs/error-codes.md'), '| 429 |'));
    expect(linkTargets(tooMany[2] ?? '')).toContain(THROTTLE_FIGURES);
  });

  it("names a route's share as the stage gives it, from its function's catalog entry", () => {
    const dataModel = flowing('docs/data-model.md');
    const { createPet, listPets } = production.throttle;
    expect(dataModel).toContain(`createPet's share is ${createPet.rateLimit} requests a second in production`);
    expect(dataModel).toContain(
      `production's \`listPets\` throttle is ${listPets.rateLimit} requests a second (burst ${listPets.burstLimit}), staging's ${staging.throttle.listPets.rateLimit},`,
    );
  });

  it("sets createPet's share against the creates the listing's shards take", () => {
    const creates = LISTING.shards * CREATES_PER_SHARD;
    const { rateLimit } = production.throttle.createPet;
    const dataModel = flowing('docs/data-model.md');
    expect(dataModel).toContain(`${creates.toLocaleString('en-US')} creates a second, ${creates / rateLimit} times createPet's share`);
    expect(dataModel).toContain(
      `${2 * LISTING.shards} shards would pay twice that for creates no stage admits until createPet's share is raised ${(2 * creates) / rateLimit}-fold`,
    );
  });
});

describe("the stages' judging of a new version in the docs", () => {
  it('is what infra/stages.ts sets, in the stage table and in the rollback alarms the runbook lists', () => {
    const operations = read('docs/operations.md');
    const differs = cellsOf(
      lineStarting(sectionOf(operations, 'What differs between the stages').join('\n'), '| A new version rolled back'),
    );
    expect(differs.slice(1)).toEqual(
      stages.map(({ alarms: { newVersion: t } }) =>
        [
          `failures ≥ ${t.failureMarginPercent} point${t.failureMarginPercent === 1 ? '' : 's'} over the old version's (${t.bakeFailurePercent} % in the bake)`,
          `503/401/404/400 ≥ ${t.excessAnswers} answers and ${t.answerDeviations} deviations over its rate`,
          `mean duration > ${t.latencyFactor}× the old's + ${t.latencyMarginMs} ms (${t.bakeMeanDurationMs / 1000} s in the bake)`,
        ].join('; '),
      ),
    );
    const release = sectionOf(operations, 'How a release reaches traffic').join('\n');
    const [{ newVersion: s }, { newVersion: p }] = [staging.alarms, production.alarms];
    expect(release).toContain(`Fires when the new version, having served ${p.minimumRequests} requests or more`);
    expect(release).toContain(`on ${p.failureMarginPercent} (production) / ${s.failureMarginPercent} (staging) percentage points more`);
    expect(release).toContain(`on ${p.bakeFailurePercent} % (production) / ${s.bakeFailurePercent} % (staging) of its requests`);
    expect(release).toContain(`held to ${p.bakeMeanDurationMs / 1000} s (production), ${s.bakeMeanDurationMs / 1000} s (staging) of mean`);
  });
});

/** Prose names a function by its name (routeNotFound) or by its file name's words (the pre-traffic hook, the synthetic probe). */
function namesFunction(text: string, name: string): boolean {
  return text === name || new RegExp(`\\b${fileNameOf(name).split('-').join('[- ]')}$`).test(text);
}

describe('the function names in the README and docs/', () => {
  const sorted = (names: readonly string[]) => [...names].sort();

  // Named by no doc, so an operation added needs no doc edited: invoke's --help lists them (test/local/invoke.test.ts).
  it('that npm run invoke takes are left to its --help, where the README and local-development.md send the reader', () => {
    const command = cellsOf(lineStarting(read('README.md'), '| `npm run invoke --'));
    expect(codeSpans(command[1] ?? '')).toContain('npm run invoke -- --help');
    const envVars = lineStarting(read('docs/local-development.md'), '- Functions go by their names');
    expect(codeSpans(envVars ?? '')).toContain('npm run invoke -- --help');
  });

  it("in local-development.md's sample events are functions behind the API, each with its own event, which every one has", () => {
    const invoked = sectionOf(read('docs/local-development.md'), 'Sample events: `npm run invoke`').flatMap((line) => {
      const found = /^npm run invoke -- (\S+) (\S+)/.exec(line);
      return found ? [`${found[1]} ${found[2]}`] : [];
    });
    const ownEvents = API_FUNCTIONS.map((name) => ({ name, event: `local/events/${fileNameOf(name)}.json` }));
    expect(invoked).not.toEqual([]);
    expect(invoked.filter((line) => !ownEvents.some(({ name, event }) => line === `${name} ${event}`))).toEqual([]);
    expect(ownEvents.filter(({ event }) => !existsSync(join(PROJECT_ROOT, event)))).toEqual([]);
  });

  it("in the README's project layout are every function's, the operations as a whole, and every room in functions/", () => {
    const layout = sectionOf(read('README.md'), 'Project layout');
    const prose = layout.join(' ').replace(/\s+/g, ' ');
    const listed = /create-pet\.ts\): (.+?); every bundle/.exec(prose)?.[1] ?? '';
    const [operations, ...others] = listed.split(/, | and /);
    expect(operations).toBe('every operation');
    const notOperations = FUNCTION_NAMES.filter((name) => !(OPERATION_IDS as readonly string[]).includes(name));
    expect(sorted(others.map((text) => notOperations.find((name) => namesFunction(text, name)) ?? text))).toEqual(sorted(notOperations));

    // The rooms are the lines indented under functions/, before the next top folder.
    const start = layout.findIndex((line) => line.startsWith('functions/'));
    const end = layout.findIndex((line, index) => index > start && /^\S/.test(line));
    const rooms = layout.slice(start, end).flatMap((line) => /^ {2}([\w-]+)\/ /.exec(line)?.[1] ?? []);
    const folders = readdirSync(join(PROJECT_ROOT, 'functions'), { withFileTypes: true }).filter((entry) => entry.isDirectory());
    expect(sorted(rooms)).toEqual(sorted(folders.map((entry) => entry.name)));
  });
});
