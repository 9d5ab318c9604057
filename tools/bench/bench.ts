import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import type { FunctionName } from '../../infra/api-functions';
import { production, stages, type StageConfig } from '../../infra/stages';
import { createLocalClient, ensureTables, startDynalite } from '../../local/dynamodb-local';
import { DynamoApiKeyStore } from '../../src/dynamodb/dynamo-api-key-store';
import { issueApiKey } from '../../src/domain/auth/manage-api-keys';
import { documentClientOver } from '../../src/dynamodb/dynamodb-client';
import { authorizerEvent, type httpEvent } from '../lambda/events';
import { functionAssets } from '../lambda/function-assets';
import { invokeBundle, runtimeNode } from '../lambda/lambda-runner';
import { synthesize } from '../lambda/synth';
import { ENV } from '../../src/facts/environment';
import { startCapacityProxy } from './capacity-proxy';
import { compareColdStarts, type ColdStartComparison, type ColdSubject } from './cold-start';
import { createEvent, expectedOutcome, getEvent, keyEvent, listEvent, outcomeOf, typicalEvent } from './events';
import { buildFloors, writePaddedFloor } from './floors';
import { compareInstructions, valgrindInstalled, type InstructionComparison } from './instructions';
import { measureLocalApi, type LocalApiResult } from './local-api';
import { ACCESS_LOG_BYTES_PER_REQUEST, PLATFORM_BYTES_PER_INVOCATION } from './log-lines';
import { cheapestMeetingGoals, estimateSizes, SIZING_MARGIN, timeAt, type SizeEstimate } from './memory-sizing';
import { PRICES } from './prices';
import { seedPets } from './seed';
import { ratio } from './statistics';
import { measureWarm, type WarmResult } from './warm';

/**
 * `npm run bench [-- --quick --instructions]`: what each function costs, measured from the assets
 * `cdk synth` produces, run by the Lambda runtime's Node against dynalite, each beside its floor
 * (tools/bench/floors/): the same SDK client and the one command the function issues, built the same way,
 * without source maps. Ratios to the floor are the verdicts; absolute times are this machine's and only context.
 * Prints the tables, writes tools/bench/results.json (results-quick.json with --quick) and exits 1
 * when a verdict fails. A few minutes on 2 cores; --quick is a smoke run of the same code paths;
 * --instructions also counts each cold start's instructions under valgrind (tools/bench/instructions.ts),
 * about three minutes more.
 */

const quick = process.argv.includes('--quick');
const countInstructions = process.argv.includes('--instructions');
if (countInstructions && !valgrindInstalled()) {
  console.error('bench: --instructions counts instructions with valgrind, which is not installed (apt-get install valgrind).');
  process.exit(2);
}
const SETTINGS = quick
  ? {
      coldRuns: 5,
      instructionRuns: 1,
      warm: { rounds: 8, batch: 10, warmup: 50 },
      petCounts: [1_000],
      capacityRequests: 3,
      local: { requests: 60, concurrency: 4, seed: 50 },
    }
  : {
      coldRuns: 61,
      instructionRuns: 3,
      warm: { rounds: 80, batch: 25, warmup: 300 },
      petCounts: [1_000, 100_000],
      capacityRequests: 5,
      local: { requests: 300, concurrency: 8, seed: 200 },
    };

/** Goal of outcome 2: a function within 5 % of its floor, cold and warm. */
const MAX_RATIO = 1.05;
const ROUTE_FUNCTIONS: FunctionName[] = ['listPets', 'createPet', 'getPet', 'routeNotFound'];
const ALL_FUNCTIONS: FunctionName[] = [...ROUTE_FUNCTIONS, 'authorizer'];
const TABLES = { pets: 'bench-pets', apiKeys: 'bench-api-keys', idempotency: 'bench-idempotency' };
const CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz';

interface Verdict {
  readonly what: string;
  readonly value: number;
  readonly limit: number;
  readonly pass: boolean;
}
const verdicts: Verdict[] = [];
function judge(what: string, value: number, limit: number): string {
  const pass = value <= limit;
  verdicts.push({ what, value, limit, pass });
  return pass ? 'pass' : 'FAIL';
}

function progress(message: string): void {
  process.stderr.write(`bench: ${message}\n`);
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const ms = (value: number, digits = 1) => value.toFixed(digits);
const dollars = (value: number) => `$${value.toFixed(3)}`;

const node = runtimeNode();
progress(`synthesizing the app (Node ${process.version} here, the functions run on ${node})`);
const synthesis = synthesize();
const dynamo = await startDynalite({ port: 0 });
const client = createLocalClient(dynamo.endpoint);
try {
  await ensureTables(client, TABLES);
  const documents = documentClientOver(client);
  const keyStore = new DynamoApiKeyStore(documents, TABLES.apiKeys);
  let pets = await seedPets(documents, TABLES.pets, SETTINGS.petCounts[0]!, 1);
  const { apiKey } = await issueApiKey(keyStore, 'bench');
  const requests = { petId: pets[0]!.id, apiKey };
  const assets = new Map(stages.map((stage) => [stage.name, functionAssets(synthesis, synthesis.stage(stage.name))]));
  const productionAssets = assets.get(production.name)!;
  const floors = await buildFloors(
    ALL_FUNCTIONS.map((name) => productionAssets.get(name)!.handler),
    synthesis.outdir,
  );
  const floorOf = (name: FunctionName) => floors.get(productionAssets.get(name)!.handler)!;
  const local = { tables: TABLES, dynamoDbEndpoint: dynamo.endpoint, cursorSecret: CURSOR_SECRET };

  /** Keys nobody has used yet: each is a cache miss for the authorizer. */
  async function issueKeys(count: number): Promise<string[]> {
    const keys: string[] = [];
    for (let start = 0; start < count; start += 50) {
      const batch = await Promise.all(Array.from({ length: Math.min(50, count - start) }, () => issueApiKey(keyStore, 'bench')));
      keys.push(...batch.map((issued) => issued.apiKey));
    }
    return keys;
  }

  /** A function's production asset and its floor, each to start cold with production's environment and a typical request. */
  function coldSubjects(name: FunctionName): { fn: ColdSubject; floor: ColdSubject } {
    const asset = productionAssets.get(name)!;
    const env = asset.environment(local);
    const event = typicalEvent(name, requests);
    const expected = expectedOutcome(name);
    return {
      fn: {
        taskRoot: asset.taskRoot,
        env,
        event,
        expect: (result) => {
          if (outcomeOf(result) !== expected) throw new Error(`${name} answered ${JSON.stringify(result)} on its cold start`);
        },
      },
      floor: { taskRoot: floorOf(name), env, event, expect: () => {} },
    };
  }

  // 1. Cold starts, production's configuration.
  const cold = new Map<FunctionName, ColdStartComparison>();
  for (const name of ALL_FUNCTIONS) {
    progress(`cold starts: ${name} and its floor, ${SETTINGS.coldRuns} runs each`);
    const { fn, floor } = coldSubjects(name);
    cold.set(name, await compareColdStarts(node, fn, floor, SETTINGS.coldRuns));
  }

  // 1b. What bytes alone cost: the floor of the function with the most code over its floor, padded
  //     with as many bytes of code it never runs, started cold beside that floor. It tells whether a
  //     smaller bundle or less work at cold start is what would close a function's gap.
  const judged = ALL_FUNCTIONS.filter((name) => name !== 'routeNotFound');
  const extraBytes = (name: FunctionName) => cold.get(name)!.function.size.bytes - cold.get(name)!.floor.size.bytes;
  const heaviest = judged.reduce((most, name) => (extraBytes(name) > extraBytes(most) ? name : most));
  progress(`cold starts: ${heaviest}'s floor padded with ${kib(extraBytes(heaviest))} of code it never runs`);
  const heaviestEnv = productionAssets.get(heaviest)!.environment(local);
  const heaviestEvent = typicalEvent(heaviest, requests);
  const bytesOnly = {
    name: heaviest,
    extraBytes: extraBytes(heaviest),
    ...(await compareColdStarts(
      node,
      {
        taskRoot: writePaddedFloor(floorOf(heaviest), extraBytes(heaviest), synthesis.outdir),
        env: heaviestEnv,
        event: heaviestEvent,
        expect: () => {},
      },
      { taskRoot: floorOf(heaviest), env: heaviestEnv, event: heaviestEvent, expect: () => {} },
      SETTINGS.coldRuns,
    )),
  };

  // 1c. With --instructions: the same cold starts counted in instructions, steady enough to show
  //     what a change of a fraction of a percent is worth (tools/bench/instructions.ts).
  const instructions = new Map<FunctionName, InstructionComparison>();
  if (countInstructions) {
    for (const name of judged) {
      progress(`instructions: ${name} and its floor under callgrind, ${SETTINGS.instructionRuns} runs each`);
      const { fn, floor } = coldSubjects(name);
      instructions.set(name, await compareInstructions(node, fn, floor, SETTINGS.instructionRuns));
    }
  }

  // 2. Warm requests of the route functions, each interleaved with its floor (and an anonymous
  //    request, for the bill: the route answers 401 without touching DynamoDB).
  const warm = new Map<FunctionName, { fn: WarmResult; floor: WarmResult; anonymous: WarmResult }>();
  for (const name of ROUTE_FUNCTIONS) {
    progress(`warm: ${name} and its floor`);
    const asset = productionAssets.get(name)!;
    const env = asset.environment(local);
    const event = typicalEvent(name, requests) as ReturnType<typeof httpEvent>;
    const anonymousEvent = { ...event, requestContext: { ...event.requestContext, authorizer: { lambda: { outcome: 'missing' } } } };
    const [fn, floor, anonymous] = await measureWarm(
      node,
      [
        { label: name, taskRoot: asset.taskRoot, env, events: [event] },
        { label: `${name} floor`, taskRoot: floorOf(name), env, events: [event] },
        { label: `${name} anonymous`, taskRoot: asset.taskRoot, env, events: [anonymousEvent] },
      ],
      SETTINGS.warm,
    );
    expectOnly(fn!, expectedOutcome(name));
    expectOnly(anonymous!, 401);
    warm.set(name, { fn: fn!, floor: floor!, anonymous: anonymous! });
  }

  // 3. The authorizer at each stage's log level: a key it has verified in the last 30 s (the common
  //    case), a key it has not (one GetItem), no key at all; the floor looks every key up.
  const authorizer = new Map<string, { cached: WarmResult; uncached: WarmResult; missing: WarmResult; floor: WarmResult }>();
  for (const stage of stages) {
    progress(`warm: the authorizer of ${stage.name} (log level ${stage.logLevel})`);
    const asset = assets.get(stage.name)!.get('authorizer')!;
    const env = asset.environment(local);
    const fresh = (await issueKeys(SETTINGS.warm.warmup + SETTINGS.warm.rounds * SETTINGS.warm.batch)).map(keyEvent);
    const [cached, uncached, missing, floor] = await measureWarm(
      node,
      [
        { label: 'cached key', taskRoot: asset.taskRoot, env, events: [keyEvent(apiKey)] },
        { label: 'new key', taskRoot: asset.taskRoot, env, events: fresh },
        { label: 'no key', taskRoot: asset.taskRoot, env, events: [authorizerEvent()] },
        { label: 'floor', taskRoot: floorOf('authorizer'), env, events: fresh },
      ],
      SETTINGS.warm,
    );
    expectOnly(cached!, 'allowed');
    expectOnly(uncached!, 'allowed');
    expectOnly(missing!, 'missing');
    authorizer.set(stage.name, { cached: cached!, uncached: uncached!, missing: missing!, floor: floor! });
  }

  // 4. DynamoDB capacity per request, metered by a proxy that asks DynamoDB what each of the
  //    functions' own requests consumed.
  const proxy = await startCapacityProxy(dynamo.endpoint);
  const capacity: Array<{ scenario: string; pets: number; readUnits: number; writeUnits: number }> = [];
  const meteredKeys = await issueKeys(SETTINGS.capacityRequests);
  try {
    for (const count of SETTINGS.petCounts) {
      if (pets.length < count) {
        progress(`seeding to ${count.toLocaleString('en')} pets`);
        pets = [...pets, ...(await seedPets(documents, TABLES.pets, count - pets.length, pets.length + 1))];
      }
      const n = SETTINGS.capacityRequests;
      const replayKey = `bench-replay-${count}`;
      const scenarios: Array<{ scenario: string; name: FunctionName; events: unknown[]; before?: unknown[] }> = [
        { scenario: 'listPets', name: 'listPets', events: Array.from({ length: n }, () => listEvent()) },
        {
          scenario: 'listPets ?status=available',
          name: 'listPets',
          events: Array.from({ length: n }, () => listEvent({ status: 'available' })),
        },
        { scenario: 'createPet', name: 'createPet', events: Array.from({ length: n }, () => createEvent()) },
        {
          scenario: 'createPet, new Idempotency-Key',
          name: 'createPet',
          events: Array.from({ length: n }, (_, index) => createEvent({ 'idempotency-key': `bench-${count}-${index}` })),
        },
        {
          scenario: 'createPet, replayed Idempotency-Key',
          name: 'createPet',
          before: [createEvent({ 'idempotency-key': replayKey })],
          events: Array.from({ length: n }, () => createEvent({ 'idempotency-key': replayKey })),
        },
        { scenario: 'getPet', name: 'getPet', events: Array.from({ length: n }, () => getEvent(pets[pets.length >> 1]!.id)) },
        // A cached key costs nothing: the authorizer answers from memory (see its warm figures).
        { scenario: 'authorizer, key not cached', name: 'authorizer', events: meteredKeys.map(keyEvent) },
      ];
      progress(`capacity at ${count.toLocaleString('en')} pets`);
      for (const { scenario, name, events, before } of scenarios) {
        const asset = productionAssets.get(name)!;
        const env = asset.environment({ ...local, dynamoDbEndpoint: proxy.endpoint });
        if (before !== undefined) {
          // Puts the state in place (a stored Idempotency-Key record); what it consumed is not the scenario's.
          await invokeBundle(node, { taskRoot: asset.taskRoot, env, events: before });
          proxy.take();
        }
        const invocation = await invokeBundle(node, { taskRoot: asset.taskRoot, env, events });
        const units = proxy.take();
        const expected = expectedOutcome(name);
        for (const result of invocation.results) {
          if (outcomeOf(result) !== expected) throw new Error(`${scenario} answered ${JSON.stringify(result)}`);
        }
        capacity.push({
          scenario,
          pets: count,
          readUnits: sum(units.filter((entry) => entry.kind === 'read').map((entry) => entry.capacityUnits)) / events.length,
          writeUnits: sum(units.filter((entry) => entry.kind === 'write').map((entry) => entry.capacityUnits)) / events.length,
        });
      }
    }
  } finally {
    await proxy.close();
  }

  // 5. The local API end to end.
  progress('the local API');
  // Its functions run in this process: quiet, as `npm start` is not here to be read.
  process.env[ENV.logLevel] = 'WARN';
  process.env[ENV.metricsDisabled] = 'true';
  const localApi: LocalApiResult[] = await measureLocalApi(SETTINGS.local);

  // Tables and verdicts.
  console.log(`\nAnimal store benchmark${quick ? ' (--quick: a smoke run, too few samples for verdicts to mean much)' : ''}`);
  console.log(`Functions run by Node ${versionOf(node)} on ${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, against dynalite.`);
  console.log(`Floors: tools/bench/floors/, the same SDK client and the one command each function issues, built alike, no source map.\n`);

  console.log(
    `Cold start: a fresh process imports the bundle with production's environment and serves one request; median [p25–p75] of ${SETTINGS.coldRuns}, alternated with the floor; ratio: the median of each run's function/floor pair.`,
  );
  console.table(
    ALL_FUNCTIONS.map((name) => {
      const c = cold.get(name)!;
      return {
        function: name,
        bundle: `${kib(c.function.size.bytes)} (${kib(c.function.size.gzipBytes)} gz)`,
        floor: `${kib(c.floor.size.bytes)} (${kib(c.floor.size.gzipBytes)} gz)`,
        'first answer ms': `${ms(c.function.firstResponseMs.median)} [${ms(c.function.firstResponseMs.p25)}–${ms(c.function.firstResponseMs.p75)}]`,
        'floor ms': `${ms(c.floor.firstResponseMs.median)} [${ms(c.floor.firstResponseMs.p25)}–${ms(c.floor.firstResponseMs.p75)}]`,
        ratio: c.ratio,
        // The fallback issues no command: its floor imports nothing at all, so the ratio measures
        // the logger and the error vocabulary against an empty file, not overhead on a DynamoDB call.
        [`≤ ${MAX_RATIO}`]: name === 'routeNotFound' ? 'no command' : judge(`cold start ${name}`, c.ratio, MAX_RATIO),
        'CPU ms': `${ms(c.function.cpuMs.median, 0)} / ${ms(c.floor.cpuMs.median, 0)}`,
        'RSS MiB': `${ms(c.function.rssMiB.median)} / ${ms(c.floor.rssMiB.median)}`,
      };
    }),
  );

  console.log(
    `Bytes alone: ${bytesOnly.name}'s floor with ${kib(bytesOnly.extraBytes)} of code it never runs appended (as much as ${bytesOnly.name} adds to it) ` +
      `starts ${bytesOnly.ratio}× as long as the floor: what bundle size alone costs. The rest of a function's ratio is code that runs at cold start (not judged).\n`,
  );

  if (instructions.size > 0) {
    const millions = (count: number) => (count / 1e6).toFixed(1);
    console.log(
      `Instructions per cold start, counted by callgrind (median of ${SETTINGS.instructionRuns}, V8's random start-up work left out): steady to about 0.1 %, ` +
        'so it shows what a small change is worth; not judged (time is). What the function runs over its floor, as a share of the floor:',
    );
    console.table(
      [...instructions].map(([name, c]) => {
        // What the function runs over its floor, part by part, as a share of the floor's total.
        const extra = (part: keyof InstructionComparison['function']) => c.function[part] - c.floor[part];
        const share = (instructionCount: number) => `${((instructionCount / c.floor.total) * 100).toFixed(1)} %`;
        return {
          function: name,
          'million / floor': `${millions(c.function.total)} / ${millions(c.floor.total)}`,
          ratio: c.ratio,
          'parsing on load': share(extra('loadParse')),
          'compiling on first run': share(extra('firstRunCompile')),
          GC: share(extra('gc')),
          'the rest': share(extra('total') - extra('loadParse') - extra('firstRunCompile') - extra('gc')),
        };
      }),
    );
    console.log('');
  }

  console.log(
    `Warm: p50 and CPU per request, ${SETTINGS.warm.rounds} rounds of ${SETTINGS.warm.batch} requests interleaved with the floor in one process.`,
  );
  console.table(
    ROUTE_FUNCTIONS.map((name) => {
      const { fn, floor } = warm.get(name)!;
      const p50Ratio = ratio(fn.p50Ms, floor.p50Ms);
      // The fallback issues no command: its floor is an empty answer, and a ratio to it says nothing.
      const hasCommand = name !== 'routeNotFound';
      return {
        function: name,
        'p50 ms': ms(fn.p50Ms, 3),
        'floor p50 ms': ms(floor.p50Ms, 3),
        ratio: p50Ratio,
        [`≤ ${MAX_RATIO}`]: hasCommand ? judge(`warm p50 ${name}`, p50Ratio, MAX_RATIO) : 'no command',
        'p99 ms': ms(fn.p99Ms, 2),
        'CPU µs': `${ms(fn.cpuUsPerRequest, 0)} / ${ms(floor.cpuUsPerRequest, 0)}`,
        'CPU ratio': ratio(fn.cpuUsPerRequest, floor.cpuUsPerRequest),
        'log B/req': Math.round(fn.logBytesPerRequest),
      };
    }),
  );

  console.log("Authorizer, warm, at each stage's log level; the floor looks every key up (GetItem).");
  console.table(
    stages.map((stage) => {
      const a = authorizer.get(stage.name)!;
      const uncachedRatio = ratio(a.uncached.p50Ms, a.floor.p50Ms);
      return {
        stage: `${stage.name} (${stage.logLevel})`,
        'cached p50 ms': ms(a.cached.p50Ms, 3),
        'cached CPU µs': ms(a.cached.cpuUsPerRequest, 0),
        'new key p50 ms': ms(a.uncached.p50Ms, 3),
        'floor p50 ms': ms(a.floor.p50Ms, 3),
        ratio: uncachedRatio,
        // The verdict is production's, like every other: staging's DEBUG lines are a cost it chose to pay.
        [`≤ ${MAX_RATIO}`]: stage === production ? judge('warm p50 authorizer (new key)', uncachedRatio, MAX_RATIO) : `(${stage.logLevel})`,
        'no key p50 ms': ms(a.missing.p50Ms, 3),
        'log B/req cached·new·none': `${Math.round(a.cached.logBytesPerRequest)} · ${Math.round(a.uncached.logBytesPerRequest)} · ${Math.round(a.missing.logBytesPerRequest)}`,
      };
    }),
  );

  console.log('DynamoDB capacity per request, as DynamoDB reports it (ReturnConsumedCapacity), by table size.');
  console.table(
    capacity.map((row) => ({
      ...row,
      pets: row.pets.toLocaleString('en'),
      readUnits: round(row.readUnits),
      writeUnits: round(row.writeUnits),
    })),
  );
  const sameAtEverySize = capacity.every((row) => {
    const first = capacity.find((other) => other.scenario === row.scenario)!;
    return row.readUnits === first.readUnits && row.writeUnits === first.writeUnits;
  });
  if (SETTINGS.petCounts.length > 1) {
    console.log(`Capacity independent of the table size: ${sameAtEverySize ? 'yes' : 'NO'}`);
    judge('capacity independent of table size', sameAtEverySize ? 0 : 1, 0);
  }

  console.log(
    `\nLocal API end to end (npm start's stack in one process), ${SETTINGS.local.requests} requests per operation, ${SETTINGS.local.concurrency} at once.`,
  );
  console.table(localApi.map((row) => ({ ...row, p50Ms: ms(row.p50Ms, 2), p99Ms: ms(row.p99Ms, 2) })));

  // Memory: each function's measured CPU stretched to the share of a vCPU each setting buys.
  const measuredCost = (name: FunctionName, stage: StageConfig) => {
    const c = cold.get(name)!;
    const w = name === 'authorizer' ? authorizer.get(stage.name)!.uncached : warm.get(name)!.fn;
    return {
      coldStart: { wallMs: c.function.firstResponseMs.median, cpuMs: c.function.cpuMs.median },
      warm: { p50Ms: w.p50Ms, p99Ms: w.p99Ms, cpuMs: w.cpuUsPerRequest / 1000 },
    };
  };
  const sizing = stages.flatMap((stage) =>
    ALL_FUNCTIONS.map((name) => {
      const estimates = estimateSizes(measuredCost(name, stage), stage.latencyGoals);
      const cheapest = cheapestMeetingGoals(estimates);
      return { stage: stage.name, name, estimates, cheapest, configured: stage.memoryMiB[name] };
    }),
  );
  console.log(
    '\nMemory: estimated cold start / warm p99 in ms at each setting (the time off CPU as measured, the CPU time divided by ' +
      `the vCPU share the memory buys: 1 vCPU at 1,769 MB). ✓ meets the stage's goals with ${SIZING_MARGIN * 100} % to spare.`,
  );
  console.table(
    sizing.map(({ stage, name, estimates, cheapest, configured }) => ({
      stage: `${stage} (≤ ${stages.find((s) => s.name === stage)!.latencyGoals.coldStartMs} / ${stages.find((s) => s.name === stage)!.latencyGoals.warmP99Ms} ms)`,
      function: name,
      ...Object.fromEntries(
        estimates.map((e: SizeEstimate) => [
          `${e.memoryMiB} MB`,
          `${ms(e.coldStartMs, 0)} / ${ms(e.warmP99Ms, 0)} ${e.meetsGoals ? '✓' : '✗'}`,
        ]),
      ),
      cheapest: cheapest?.memoryMiB ?? 'none',
      configured,
      verdict: judge(
        `memory ${stage} ${name} (configured ${configured}, cheapest ${cheapest?.memoryMiB ?? 'none'})`,
        cheapest?.memoryMiB === configured ? 0 : 1,
        0,
      ),
    })),
  );

  // The bill, production, per million requests.
  const productionAuthorizer = authorizer.get(production.name)!;
  const billedMs = (name: FunctionName, result: WarmResult) =>
    Math.ceil(timeAt(production.memoryMiB[name], result.p50Ms, result.cpuUsPerRequest / 1000));
  const durationCost = (name: FunctionName, milliseconds: number) =>
    (milliseconds / 1000) * (production.memoryMiB[name] / 1024) * PRICES.lambdaArmPerGbSecond * 1e6;
  const capacityAt = (scenario: string) => capacity.find((row) => row.scenario === scenario && row.pets === SETTINGS.petCounts[0])!;
  const bill = [
    { operation: 'listPets', name: 'listPets' as FunctionName, result: warm.get('listPets')!.fn, capacity: capacityAt('listPets') },
    { operation: 'createPet', name: 'createPet' as FunctionName, result: warm.get('createPet')!.fn, capacity: capacityAt('createPet') },
    { operation: 'getPet', name: 'getPet' as FunctionName, result: warm.get('getPet')!.fn, capacity: capacityAt('getPet') },
    {
      operation: 'anonymous (401)',
      name: 'listPets' as FunctionName,
      result: warm.get('listPets')!.anonymous,
      capacity: { readUnits: 0, writeUnits: 0 },
    },
  ].map(({ operation, name, result, capacity: units }) => {
    const anonymous = operation.startsWith('anonymous');
    const auth = anonymous ? productionAuthorizer.missing : productionAuthorizer.cached;
    const api = PRICES.httpApiPerMillionRequests;
    const invocations = 2 * PRICES.lambdaPerMillionInvocations;
    const duration = durationCost(name, billedMs(name, result)) + durationCost('authorizer', billedMs('authorizer', auth));
    const dynamoDb = units.readUnits * PRICES.dynamoDbPerMillionReadUnits + units.writeUnits * PRICES.dynamoDbPerMillionWriteUnits;
    const logBytes = result.logBytesPerRequest + auth.logBytesPerRequest + 2 * PLATFORM_BYTES_PER_INVOCATION + ACCESS_LOG_BYTES_PER_REQUEST;
    const logs = ((logBytes * 1e6) / 1024 ** 3) * PRICES.logsPerGbIngested;
    return {
      operation,
      'HTTP API': dollars(api),
      'Lambda requests': dollars(invocations),
      'Lambda duration': dollars(duration),
      DynamoDB: dollars(dynamoDb),
      'log bytes': Math.round(logBytes),
      logs: dollars(logs),
      'per million': dollars(api + invocations + duration + dynamoDb + logs),
      total: api + invocations + duration + dynamoDb + logs,
    };
  });
  console.log(
    `\nThe bill per million requests, production (arm64, memory as configured), ${PRICES.region} list prices read ${PRICES.readOn} (tools/bench/prices.ts). ` +
      'The authorizer has the key cached (it looks a key up once per 30 s per instance); a lookup adds ' +
      `${dollars(capacityAt('authorizer, key not cached').readUnits * PRICES.dynamoDbPerMillionReadUnits)} per million. ` +
      'Cold starts (INIT is billed) and the free tier are left out.',
  );
  console.table(bill.map(({ total: _total, ...row }) => row));

  const failed = verdicts.filter((verdict) => !verdict.pass);
  console.log(`\nVerdicts: ${verdicts.length - failed.length} of ${verdicts.length} pass.`);
  for (const verdict of failed) console.log(`  FAIL ${verdict.what}: ${verdict.value} > ${verdict.limit}`);

  const results = {
    quick,
    settings: SETTINGS,
    machine: { runtime: versionOf(node), cpus: cpus().length, cpu: cpus()[0]?.model },
    coldStarts: Object.fromEntries(cold),
    bytesOnly,
    ...(instructions.size > 0 ? { instructions: Object.fromEntries(instructions) } : {}),
    warm: Object.fromEntries(warm),
    authorizer: Object.fromEntries(authorizer),
    capacity,
    localApi,
    memory: sizing.map(({ stage, name, estimates, cheapest, configured }) => ({
      stage,
      function: name,
      estimates,
      cheapest: cheapest?.memoryMiB,
      configured,
    })),
    bill,
    prices: PRICES,
    verdicts,
  };
  const file = join(import.meta.dirname, quick ? 'results-quick.json' : 'results.json');
  mkdirSync(import.meta.dirname, { recursive: true });
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`Wrote ${file}.`);
  process.exitCode = failed.length === 0 ? 0 : 1;
} finally {
  client.destroy();
  synthesis.dispose();
  await dynamo.close();
}

/** A benchmark of error answers would measure the wrong path: every request must have been answered as intended. */
function expectOnly(result: WarmResult, outcome: number | string): void {
  const answered = Object.keys(result.statuses);
  if (answered.length !== 1 || answered[0] !== String(outcome)) {
    throw new Error(`${result.label} was answered ${JSON.stringify(result.statuses)}, not only ${outcome}`);
  }
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** `node --version` of a Node binary. */
function versionOf(binary: string): string {
  return execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
}
