import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { production, stages, type StageConfig } from '../../infra/stages';
import { PROJECT_ROOT } from '../../shared/facts/project-layout';
import { OPERATION_IDS } from '../../shared/facts/routes';
import type { BillRow } from '../../tools/bench/bill';
import { PRICES } from '../../tools/bench/prices';
import {
  billFrom,
  type BenchResults,
  coldStartsFrom,
  COSTS_PATH,
  dailyCapOf,
  fixedMonthlyOf,
  renderCosts,
  unmeasuredFunctions,
} from '../../tools/costs';
import { COLD_START_RATE } from '../../tools/bench/bill';
import { judgeBench, MAX_LOG_BYTES, MAX_TO_FLOOR } from '../../tools/bench/bench-verdicts';
import type { CfnTemplate } from '../../tools/lambda/synth';
import { synthesizedApp } from '../helpers/synthesized-app';

/** A bill line with only what the cap reads. */
const line = (operation: string, total: number) => ({ operation, total }) as BillRow;

describe('the cost page', () => {
  it('is what `npm run costs` renders from the price table, the bench results and the stages', () => {
    // The stages as the infra project's files share them: npm run costs synthesizes them without bundling, which
    // changes no value the page reads, and a synthesis of its own would cost this file seconds of CPU.
    const results = JSON.parse(readFileSync(join(PROJECT_ROOT, 'tools/bench/results.json'), 'utf8')) as BenchResults;
    const templates = synthesizedApp().stages.map(({ config, json }) => ({ config, template: json }));
    expect(readFileSync(COSTS_PATH, 'utf8'), 'docs/costs.md is stale: run npm run costs').toBe(renderCosts(results, templates));
  });

  it('names the functions the bench has not measured yet, which it cannot price: none today, a new one until the bench runs', () => {
    const results = JSON.parse(readFileSync(join(PROJECT_ROOT, 'tools/bench/results.json'), 'utf8')) as BenchResults;
    expect(unmeasuredFunctions(results)).toEqual([]);
    const { getPet: _, ...withoutGetPet } = results.coldStarts;
    expect(unmeasuredFunctions({ ...results, coldStarts: withoutGetPet })).toEqual(['getPet']);
  });

  it('prices every stage in the region it deploys to', () => {
    for (const stage of stages) expect(stage.region, `${stage.name}'s region: update tools/bench/prices.ts`).toBe(PRICES.region);
  });

  it('is the only page that states a price: the README and the other docs point to it', () => {
    const pages = ['README.md', ...readdirSync(join(PROJECT_ROOT, 'docs')).map((name) => `docs/${name}`)].filter(
      (page) => page.endsWith('.md') && page !== 'docs/costs.md',
    );
    const outsideCode = (text: string) => text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
    const priced = pages.flatMap((page) =>
      (outsideCode(readFileSync(join(PROJECT_ROOT, page), 'utf8')).match(/\$\d[\d,.]*/g) ?? []).map((figure) => `${page}: ${figure}`),
    );
    expect(priced).toEqual([]);
  });

  it('prices each budgeted request the bench last measured, every operation among them, within its log bytes and its ratio to the floor', () => {
    const bill = billFrom(JSON.parse(readFileSync(join(PROJECT_ROOT, 'tools/bench/results.json'), 'utf8')) as BenchResults);
    const judged = judgeBench({ instructions: undefined, bill, capacityIndependentOfTableSize: undefined, memory: [] }).bill;
    const priced = new Set(bill.map((row) => row.operation));
    for (const operationId of OPERATION_IDS) expect(priced, operationId).toContain(operationId);
    // Results recorded before an answer class was measured have no row for it (test/tools/bench/answer-classes.test.ts).
    const budgets = (limits: Readonly<Record<string, number>>) => Object.keys(limits).filter((row) => priced.has(row)).length;
    expect(judged.length).toBe(budgets(MAX_LOG_BYTES) + budgets(MAX_TO_FLOOR));
    // Only these, until the bench run that measures them is recorded: any other budget without a row fails here.
    const unbilled = (limits: Readonly<Record<string, number>>) => Object.keys(limits).filter((row) => !priced.has(row));
    const notYetRecorded = [
      'createPet, invalid body (400)',
      'listPets, invalid limit (400)',
      'unknown key (401)',
      'getPet, no such pet (404)',
      'unmatched route (404)',
      'store unavailable (503)',
    ];
    expect(unbilled(MAX_LOG_BYTES)).toEqual(notYetRecorded);
    expect(unbilled(MAX_TO_FLOOR)).toEqual(notYetRecorded);
    expect(judged.filter((verdict) => !verdict.pass)).toEqual([]);
  });
});

describe("the cold starts' part of the bill", () => {
  const results = JSON.parse(readFileSync(join(PROJECT_ROOT, 'tools/bench/results.json'), 'utf8')) as BenchResults;

  it('prices a cold start as what it bills beyond the same request warm, at the memory the function is given', () => {
    const costs = coldStartsFrom(results);
    expect(costs.map((cost) => cost.name).sort()).toEqual(Object.keys(results.coldStarts).sort());
    for (const cost of costs) {
      expect(cost.memoryMiB, cost.name).toBe(production.memoryMiB[cost.name]);
      expect(cost.extraMs, cost.name).toBeGreaterThan(0);
      expect(cost.extraMs, cost.name).toBeLessThan(cost.billedMs);
    }
  });

  it("adds to each request, beside its price, its two functions' cold starts at the bill's share of invocations", () => {
    const costs = new Map(coldStartsFrom(results).map((cost) => [cost.name, cost.perMillion]));
    const listPets = billFrom(results).find((row) => row.operation === 'listPets')!;
    const expected = COLD_START_RATE * (costs.get('listPets')! + costs.get('authorizer')!);
    expect(listPets['cold starts']).toBe(`$${expected.toFixed(3)}`);
    expect(listPets['cold-start share']).toBe(`${((expected / (listPets.total + expected)) * 100).toFixed(1)} %`);
  });
});

describe('the most a stage can cost in a day', () => {
  const bill = [
    line('listPets', 2),
    line('anonymous (401)', 3),
    line('createPet', 4),
    line('createPet, new Idempotency-Key', 6),
    line('getPet', 1),
  ];

  it("bills each route's whole share of the throttle at the costliest request that route can serve", () => {
    const caps = new Map(dailyCapOf(production, bill).map((cap) => [cap.route, cap]));
    expect(caps.get('createPet')).toEqual(
      expect.objectContaining({ costliest: bill[3], perDay: (production.throttle.createPet.rateLimit * 86_400 * 6) / 1e6 }),
    );
    // A listing refused for want of a key costs more than one served: its log lines are longer.
    expect(caps.get('listPets')?.costliest).toBe(bill[1]);
    expect(caps.get('routeNotFound')?.costliest).toBe(bill[1]);
  });

  it('counts the preflight route only on a stage that allows browser origins', () => {
    const browser: StageConfig = { ...production, cors: { ...production.cors, allowOrigins: ['https://shop.example.com'] } };
    expect(dailyCapOf(production, bill).map((cap) => cap.route)).not.toContain('preflight');
    expect(dailyCapOf(browser, bill).map((cap) => cap.route)).toContain('preflight');
  });
});

describe('what a stage costs with no traffic', () => {
  it('bills each alarm for every metric it reads, a metric-math alarm for each of its metrics', () => {
    const math = {
      Metrics: [
        { Id: 'm', Expression: 'a / b' },
        { Id: 'a', MetricStat: {} },
        { Id: 'b', MetricStat: {} },
      ],
    };
    const template = (single: number, ofMath: number): CfnTemplate => ({
      Resources: Object.fromEntries([
        ...Array.from({ length: single }, (_, index) => [`Alarm${index}`, { Type: 'AWS::CloudWatch::Alarm', Properties: {} }]),
        ...Array.from({ length: ofMath }, (_, index) => [`MathAlarm${index}`, { Type: 'AWS::CloudWatch::Alarm', Properties: math }]),
        ['Dashboard', { Type: 'AWS::CloudWatch::Dashboard' }],
        ['Secret', { Type: 'AWS::SecretsManager::Secret' }],
      ]),
    });
    const fixed = (single: number, ofMath: number) => fixedMonthlyOf({ config: production, template: template(single, ofMath) });
    const alarmLine = (single: number, ofMath: number) => fixed(single, ofMath).rows.find(([item]) => item.startsWith('Alarm metrics'));
    expect(alarmLine(3, 1)?.slice(1)).toEqual(['5', 5 * PRICES.alarmMetricPerMonth]);
    expect(alarmLine(3, 1)?.[0]).toContain('4 alarms');
    expect(fixed(3, 2).total).toBeCloseTo(fixed(3, 1).total + 2 * PRICES.alarmMetricPerMonth);
  });

  it('counts the access log’s own metrics beside the business and probe metrics, the refusals by reason once', () => {
    const filter = (dimensions?: object): CfnTemplate['Resources'][string] => ({
      Type: 'AWS::Logs::MetricFilter',
      Properties: { MetricTransformations: [{ MetricName: 'x', ...(dimensions ? { Dimensions: [dimensions] } : {}) }] },
    });
    const metrics = (resources: CfnTemplate['Resources']) =>
      Number(
        fixedMonthlyOf({ config: production, template: { Resources: resources } }).rows.find(([item]) =>
          item.startsWith('Custom metrics'),
        )?.[1],
      );
    expect(metrics({ Keyed: filter(), Accepted: filter() })).toBe(metrics({}) + 2);
    expect(metrics({ ByReason: filter({ Key: 'reason', Value: '$.authorizerOutcome' }) })).toBe(metrics({}));
  });

  it('runs the probe once per alarm period', () => {
    const runs = (periodMinutes: number) =>
      fixedMonthlyOf({ config: { ...production, alarms: { ...production.alarms, periodMinutes } }, template: { Resources: {} } }).rows.find(
        ([item]) => item.startsWith('Probe: scheduled runs'),
      )?.[1];
    expect(runs(1)).toBe((730 * 60).toLocaleString('en-US'));
    expect(runs(5)).toBe(((730 * 60) / 5).toLocaleString('en-US'));
  });
});
