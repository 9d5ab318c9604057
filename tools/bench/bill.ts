import { production } from '../../infra/stages';
import { isDeployed } from './bench-functions';
import { dollars } from './format';
import { LOG_BYTES_BESIDE_FUNCTIONS } from './log-lines';
import type { ColdStartComparison } from './cold-start';
import type { CapacityRow } from './measure-capacity';
import type { WarmRequestResults } from './measure-warm-requests';
import { timeAt } from './memory-sizing';
import { PRICES } from './prices';
import type { WarmResult } from './warm';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { OPERATION_IDS } from '../../shared/facts/routes';
import { ANSWER_CLASSES, type AnswerClass, authorizerStepOf, billRowOf, routeStepOf } from './answer-classes';

/** What a million requests of one operation cost in production, part by part. */
export interface BillRow {
  readonly operation: string;
  readonly 'HTTP API': string;
  readonly 'Lambda requests': string;
  readonly 'Lambda duration': string;
  readonly DynamoDB: string;
  readonly 'log bytes': number;
  readonly logs: string;
  readonly 'per million': string;
  /** The architecture's floor for the request: HTTP API, two invocations and its DynamoDB units; the rest is ours. */
  readonly floor: string;
  readonly 'to floor': number;
  /** Its two functions' cold starts per million requests, at COLD_START_RATE, beside the per-million figure (see computeBill). */
  readonly 'cold starts': string;
  /** What share of the request's cost, cold starts included, they are. */
  readonly 'cold-start share': string;
  readonly total: number;
}

/**
 * The share of each function's invocations the bill takes as cold starts: AWS finds INIT in under 1 % of production
 * invocations ("AWS Lambda standardizes billing for INIT Phase", AWS Compute Blog, 2025), so 1 %, the most it reports.
 */
export const COLD_START_RATE = 0.01;

/** One function's cold start in production, estimated at its memory as the memory choice does (memory-sizing.ts). */
export interface ColdStartCost {
  readonly name: ApiFunctionName;
  readonly memoryMiB: number;
  /** INIT and the first request, billed since INIT is: this machine's cold start, its CPU time stretched to the memory's vCPU share. */
  readonly billedMs: number;
  /** What it bills beyond the same request warm. */
  readonly extraMs: number;
  /** Those milliseconds for a million cold starts. */
  readonly perMillion: number;
}

/** Milliseconds of a function in production priced for a million invocations, at its memory (arm64). */
function durationCost(name: ApiFunctionName, milliseconds: number): number {
  return (milliseconds / 1000) * (production.memoryMiB[name] / 1024) * PRICES.lambdaArmPerGbSecond * 1e6;
}

/** A warm request's billed duration in production, per started ms. */
function billedMs(name: ApiFunctionName, result: WarmResult): number {
  return Math.ceil(timeAt(production.memoryMiB[name], result.p50Ms, result.cpuUsPerRequest / 1000));
}

/** A cold start of `name` as measured (`cold`), beyond its request warm (`warm`). */
export function coldStartCost(name: ApiFunctionName, cold: ColdStartComparison, warm: WarmResult): ColdStartCost {
  const memoryMiB = production.memoryMiB[name];
  const billed = Math.ceil(timeAt(memoryMiB, cold.function.firstResponseMs.median, cold.function.cpuMs.median));
  const extraMs = billed - billedMs(name, warm);
  return { name, memoryMiB, billedMs: billed, extraMs, perMillion: durationCost(name, extraMs) };
}

export function capacityAt(capacity: readonly CapacityRow[], scenario: string, pets: number): CapacityRow {
  return capacity.find((row) => row.scenario === scenario && row.pets === pets)!;
}

/** Each answer class's functions served its request warm, in the class's order (tools/bench/measure-answer-classes.ts). */
export type AnswerWarmResults = ReadonlyMap<string, readonly WarmResult[]>;

/**
 * Per million production requests: function and authorizer billed per started ms, at the capacity measured on the
 * smallest table; then a row for each answer class measured. Their cold starts are priced beside, not in, the
 * per-million figure and its ratio to the floor, which are measured: how often a function starts cold depends on
 * traffic, and COLD_START_RATE is an assumption.
 */
export function computeBill(
  { warm, authorizer, answers }: Pick<WarmRequestResults, 'warm' | 'authorizer'> & { readonly answers: AnswerWarmResults },
  cold: ReadonlyMap<ApiFunctionName, ColdStartComparison>,
  capacity: readonly CapacityRow[],
  pets: number,
): BillRow[] {
  const productionAuthorizer = authorizer.get(production.name)!;
  const zero = { readUnits: 0, writeUnits: 0 };
  type Measured = { result: WarmResult; auth: WarmResult; units: typeof zero };
  // The function's warm result and its capacity scenario of the same name, behind a cached key.
  const measuredAs = (operation: string, name: ApiFunctionName) => ({
    operation,
    name,
    measured: (): Measured => ({
      result: warm.get(name)!.fn,
      auth: productionAuthorizer.cached,
      units: capacityAt(capacity, operation, pets),
    }),
  });
  // A class's route function, and its authorizer when the verdict is the class's, else one holding the key cached;
  // the capacity its scenario of the same name consumed, when it reads a table.
  const answerRow = (answerClass: AnswerClass, results: readonly WarmResult[]) => {
    const operation = billRowOf(answerClass);
    const authorizerStep = authorizerStepOf(answerClass);
    return {
      operation,
      name: routeStepOf(answerClass).name as ApiFunctionName,
      measured: (): Measured => ({
        result: results.at(-1)!,
        auth: authorizerStep === undefined ? productionAuthorizer.cached : results[answerClass.steps.indexOf(authorizerStep)]!,
        units: answerClass.store === 'read' ? capacityAt(capacity, operation, pets) : zero,
      }),
    };
  };
  // What each line measured, read only for a function the route table still deploys. A line is named for its
  // operation, and a variant of it after a comma (costs.ts reads which route serves it from that name).
  const operations: Array<{ operation: string; name: ApiFunctionName; measured: () => Measured }> = [
    ...OPERATION_IDS.map((operationId) => measuredAs(operationId, operationId)),
    // Its DynamoDB writes as measured; its duration is the unkeyed create's, which the bench times.
    measuredAs('createPet, new Idempotency-Key', 'createPet'),
    ...ANSWER_CLASSES.flatMap((answerClass) => {
      const results = answers.get(answerClass.id);
      return results === undefined ? [] : [answerRow(answerClass, results)];
    }),
  ];
  return operations
    .filter(({ name }) => isDeployed(name))
    .map(({ operation, name, measured }) => {
      const { result, auth, units } = measured();
      const api = PRICES.httpApiPerMillionRequests;
      const invocations = 2 * PRICES.lambdaPerMillionInvocations;
      const duration = durationCost(name, billedMs(name, result)) + durationCost('authorizer', billedMs('authorizer', auth));
      const dynamoDb = units.readUnits * PRICES.dynamoDbPerMillionReadUnits + units.writeUnits * PRICES.dynamoDbPerMillionWriteUnits;
      const logBytes = result.logBytesPerRequest + auth.logBytesPerRequest + LOG_BYTES_BESIDE_FUNCTIONS;
      const logs = ((logBytes * 1e6) / 1024 ** 3) * PRICES.logsPerGbIngested;
      const total = api + invocations + duration + dynamoDb + logs;
      const floor = api + invocations + dynamoDb;
      const coldStarts =
        COLD_START_RATE *
        (coldStartCost(name, cold.get(name)!, result).perMillion + coldStartCost('authorizer', cold.get('authorizer')!, auth).perMillion);
      return {
        operation,
        'HTTP API': dollars(api),
        'Lambda requests': dollars(invocations),
        'Lambda duration': dollars(duration),
        DynamoDB: dollars(dynamoDb),
        'log bytes': Math.round(logBytes),
        logs: dollars(logs),
        'per million': dollars(total),
        floor: dollars(floor),
        'to floor': Number((total / floor).toFixed(2)),
        'cold starts': dollars(coldStarts),
        'cold-start share': `${((coldStarts / (total + coldStarts)) * 100).toFixed(1)} %`,
        total,
      };
    });
}
