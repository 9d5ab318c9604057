import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { production } from '../../../infra/stages';
import { PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { ANSWER_CLASSES, type AnswerClass, authorizerStepOf, billRowOf, routeStepOf } from '../../../tools/bench/answer-classes';
import type { ColdReference } from '../../../tools/bench/bench-verdicts';
import type { InstructionComparison, WarmInstructionComparison } from '../../../tools/bench/instructions';
import { LOG_BYTES_BESIDE_FUNCTIONS } from '../../../tools/bench/log-lines';
import { addedUp } from '../../../tools/bench/measure-answer-classes';
import type { WarmResult } from '../../../tools/bench/warm';
import { type BenchResults, billFrom } from '../../../tools/costs';

const CLASSES = ANSWER_CLASSES;
const recorded = JSON.parse(readFileSync(join(PROJECT_ROOT, 'tools/bench/results.json'), 'utf8')) as BenchResults;

/** A warm result of `label` that wrote `logBytes` per request. */
const warmResult = (label: string, logBytes: number): WarmResult => ({
  label,
  p50Ms: 1,
  p99Ms: 2,
  cpuUsPerRequest: 500,
  logBytesPerRequest: logBytes,
  requests: 10,
  statuses: {},
});

describe('the answer classes', () => {
  it('each end with the route function answering the status of the class, the authorizer before it only with a verdict of its own', () => {
    for (const answerClass of CLASSES) {
      expect(routeStepOf(answerClass).outcome, answerClass.id).toBe(answerClass.status);
      const authorizer = authorizerStepOf(answerClass);
      if (authorizer !== undefined) expect(answerClass.steps.indexOf(authorizer), answerClass.id).toBe(0);
      expect(answerClass.steps.filter((step) => step.name !== 'authorizer').length, `${answerClass.id} reaches one route function`).toBe(1);
    }
  });

  it('send the authorizer a key it has not seen at every iteration where its verdict needs a lookup', () => {
    const lookedUp = CLASSES.filter((candidate) => candidate.store === 'read' && authorizerStepOf(candidate) !== undefined);
    expect(lookedUp.length).toBeGreaterThan(0);
    for (const answerClass of lookedUp) {
      const step = authorizerStepOf(answerClass)!;
      expect(JSON.stringify(step.event(1)), answerClass.id).not.toBe(JSON.stringify(step.event(2)));
    }
  });
});

describe("an answer class's instructions", () => {
  const cold = (fn: number[], floor: number[]) =>
    ({ runTotals: { function: fn, esm: floor, cdkDefault: floor } }) as unknown as InstructionComparison<ColdReference>;
  const warm = (fn: number[], floor: number[]) =>
    ({ function: { windows: fn }, floor: { windows: floor } }) as unknown as WarmInstructionComparison;

  it("add its functions' counts up run by run and window by window, and judge the sums as one ratio", () => {
    const counted = addedUp([
      { label: 'authorizer', cold: cold([300, 310, 320], [290, 290, 290]), warm: warm([10, 11, 12], [10, 10, 10]) },
      { label: 'listPets', cold: cold([400, 400, 400], [300, 310, 320]), warm: warm([20, 20, 20], [19, 19, 19]) },
    ]);
    expect(counted.cold.function).toBe(710);
    expect(counted.cold.floors.esm).toMatchObject({ floor: 600, ratio: Number((710 / 600).toFixed(3)) });
    expect(counted.cold.floors.esm.spread).toBeCloseTo(720 / 590 - 700 / 610, 4);
    expect(counted.warm).toMatchObject({ function: 31, floor: 29, ratio: Number((31 / 29).toFixed(3)) });
  });
});

describe("the bill's answer classes", () => {
  /** The recorded results, each class's functions measured: the authorizer's answers writing 100 bytes, the route's 200. */
  const answers = Object.fromEntries(
    CLASSES.map((answerClass) => [
      answerClass.id,
      answerClass.steps.map((step) => warmResult(step.name, step.name === 'authorizer' ? 100 : 200)),
    ]),
  );
  const capacity = [
    ...recorded.capacity,
    ...CLASSES.filter((answerClass) => answerClass.store === 'read').map((answerClass) => ({
      scenario: billRowOf(answerClass),
      pets: recorded.settings.petCounts[0]!,
      readUnits: 1,
      writeUnits: 0,
    })),
  ];
  const bill = billFrom({ ...recorded, answers, capacity });
  const rowOf = (answerClass: AnswerClass) => bill.find((row) => row.operation === billRowOf(answerClass))!;

  it('price a row for every class, named with its status', () => {
    expect(CLASSES.map((answerClass) => rowOf(answerClass)?.operation)).toEqual(CLASSES.map(billRowOf));
  });

  it("bill the authorizer's own answer where the verdict is the class's, and a cached key's where it is not", () => {
    const cached = recorded.authorizer[production.name]!.cached.logBytesPerRequest;
    for (const answerClass of CLASSES) {
      const authorizerBytes = authorizerStepOf(answerClass) === undefined ? cached : 100;
      expect(rowOf(answerClass)['log bytes'], answerClass.id).toBe(Math.round(200 + authorizerBytes + LOG_BYTES_BESIDE_FUNCTIONS));
    }
  });

  it('bill DynamoDB only for a class that reads a table', () => {
    for (const answerClass of CLASSES) {
      expect(rowOf(answerClass).DynamoDB !== '$0.000', answerClass.id).toBe(answerClass.store === 'read');
    }
  });

  it('keep pricing the anonymous request from results recorded before every class was measured', () => {
    const { answers: _, ...before } = recorded as BenchResults & { answers?: unknown };
    const rows = billFrom(before as BenchResults).map((row) => row.operation);
    expect(rows.filter((row) => CLASSES.some((answerClass) => billRowOf(answerClass) === row))).toEqual(['anonymous (401)']);
  });
});

describe("docs/performance.md's table of answers", () => {
  it('has a row for every answer class, by the name of its bill row, and no other', () => {
    const page = readFileSync(join(PROJECT_ROOT, 'docs/performance.md'), 'utf8');
    const section = page.slice(page.indexOf('## Every answer against its floor'));
    const rows = [...section.matchAll(/^\| ([^|]+? \(\d{3}\)) \|/gm)].map((match) => match[1]);
    expect(rows).toEqual(CLASSES.map(billRowOf));
  });
});
