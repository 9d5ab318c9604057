import { writeInBatches } from '../../local/dynamodb-local';
import { PETS_TABLE } from '../../shared/dynamodb/pets-table';
import { invokeBundle } from '../lambda/lambda-runner';
import { isDeployed } from './bench-functions';
import type { BenchSetup } from './bench-setup';
import type { BenchSettings } from './bench-settings';
import { startCapacityProxy } from './capacity-proxy';
import { benchEvent, expectedOutcome, expectOutcome, keyEvent, operationBenchEvent } from './bench-events';
import { progress } from './format';
import { seedPets } from './seed';
import type { ApiFunctionName } from '../../shared/facts/function-names';
import { OPERATION_IDS } from '../../shared/facts/routes';
import { ANSWER_CLASSES, billRowOf } from './answer-classes';

/** DynamoDB capacity one request of a scenario consumed, on average, at one table size. */
export interface CapacityRow {
  readonly scenario: string;
  readonly pets: number;
  readonly readUnits: number;
  readonly writeUnits: number;
}

interface Scenario {
  readonly scenario: string;
  readonly name: ApiFunctionName;
  readonly events: unknown[];
  /** Puts the state in place (a stored Idempotency-Key record); what it consumed is not the scenario's. */
  readonly before?: unknown[];
}

/** Pets added are older than all others and created ones deleted, so every table size lists the same newest pets. */
export async function measureCapacity(bench: BenchSetup, settings: BenchSettings): Promise<CapacityRow[]> {
  const { tables, dynamoDbEndpoint } = bench.local;
  const proxy = await startCapacityProxy(dynamoDbEndpoint);
  const capacity: CapacityRow[] = [];
  const meteredKeys = await bench.issueKeys(settings.capacityRequests);
  let pets = bench.pets;
  /** Runs `events` through a function against the proxy, each answered `expected`: their results, and the units they consumed. */
  const meter = async (name: ApiFunctionName, events: unknown[], expected: number | string, label: string) => {
    const asset = bench.productionAssets.get(name)!;
    const env = asset.environment({ ...bench.local, dynamoDbEndpoint: proxy.endpoint });
    const { results } = await invokeBundle(bench.node, { taskRoot: asset.taskRoot, env, events });
    results.forEach(expectOutcome(label, expected));
    const units = { read: 0, write: 0 };
    for (const entry of proxy.take()) units[entry.kind] += entry.capacityUnits;
    return { results, units };
  };
  try {
    for (const count of settings.petCounts) {
      /** The pets the create scenarios store: deleted before the next size, whose listings must read the same head. */
      const created: number[] = [];
      if (pets.length < count) {
        progress(`seeding to ${count.toLocaleString('en')} pets`);
        const oldest = Date.parse(pets[0]!.createdAt);
        pets = [...(await seedPets(bench.documents, tables.pets, count - pets.length, pets.length + 1, oldest - 1000)), ...pets];
      }
      const times = (event: (index: number) => unknown) => Array.from({ length: settings.capacityRequests }, (_, index) => event(index));
      const replayKey = `bench-replay-${count}`;
      const middle = pets[pets.length >> 1]!.id;
      const scenarios: Scenario[] = [
        // Every operation's bench request, each naming a pet of its own when its route names one.
        ...(await Promise.all(
          OPERATION_IDS.map(async (operationId) => ({
            scenario: operationId,
            name: operationId,
            events: (
              await bench.iterationsFor(operationId, settings.capacityRequests)
            ).map((index) => benchEvent(operationId, bench.requests, index)),
          })),
        )),
        // Besides: a filtered listing, and creates with an Idempotency-Key, new and replayed.
        {
          scenario: 'listPets ?status=available',
          name: 'listPets',
          events: times(() => operationBenchEvent('listPets', middle, { query: { status: 'available' } })),
        },
        {
          scenario: 'createPet, new Idempotency-Key',
          name: 'createPet',
          events: times((index) => operationBenchEvent('createPet', middle, { headers: { 'idempotency-key': `bench-${count}-${index}` } })),
        },
        {
          scenario: 'createPet, replayed Idempotency-Key',
          name: 'createPet',
          before: [operationBenchEvent('createPet', middle, { headers: { 'idempotency-key': replayKey } })],
          events: times(() => operationBenchEvent('createPet', middle, { headers: { 'idempotency-key': replayKey } })),
        },
        // A cached key costs nothing: the authorizer answers from memory.
        { scenario: 'authorizer, key not cached', name: 'authorizer', events: meteredKeys.map(keyEvent) },
      ];
      progress(`capacity at ${count.toLocaleString('en')} pets`);
      for (const { scenario, name, events, before } of scenarios.filter((candidate) => isDeployed(candidate.name))) {
        const expected = expectedOutcome(name);
        if (before !== undefined) await meter(name, before, expected, `${scenario}, before`);
        const { results, units } = await meter(name, events, expected, scenario);
        if (name === 'createPet') created.push(...results.map((result) => JSON.parse((result as { body: string }).body).id));
        capacity.push({ scenario, pets: count, readUnits: units.read / events.length, writeUnits: units.write / events.length });
      }
      // Each answer class that reads a table: what its functions consumed together, under the row's name in the bill.
      for (const answerClass of ANSWER_CLASSES.filter((candidate) => candidate.store === 'read')) {
        const units = { read: 0, write: 0 };
        for (const step of answerClass.steps) {
          const taken = (await meter(step.name, times(step.event), step.outcome, `${answerClass.id}, ${step.name}`)).units;
          units.read += taken.read / settings.capacityRequests;
          units.write += taken.write / settings.capacityRequests;
        }
        capacity.push({ scenario: billRowOf(answerClass), pets: count, readUnits: units.read, writeUnits: units.write });
      }
      await deletePets(bench, created);
    }
  } finally {
    await proxy.close();
  }
  return capacity;
}

/** Whether every scenario consumed the same capacity at every table size: no request scans. */
export function capacityIndependentOfTableSize(capacity: readonly CapacityRow[]): boolean {
  return capacity.every((row) => {
    const first = capacity.find((other) => other.scenario === row.scenario)!;
    return row.readUnits === first.readUnits && row.writeUnits === first.writeUnits;
  });
}

/** Deletes pets by id, past the proxy: what it costs is no scenario's. */
async function deletePets(bench: BenchSetup, ids: readonly number[]): Promise<void> {
  const keys = [...new Set(ids)].map((id) => ({ DeleteRequest: { Key: { [PETS_TABLE.partitionKey]: id } } }));
  await writeInBatches(bench.documents, bench.local.tables.pets, keys);
}
