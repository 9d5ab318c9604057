import { execFileSync } from 'node:child_process';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { production, stages } from '../../infra/stages';
import { createLocalClient, ensureTables, startDynalite } from '../../local/dynamodb-local';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import type { PetRecord } from '../../shared/domain/pets/pet-schemas';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { functionAssets, type FunctionAsset, type LocalResources } from '../lambda/function-assets';
import { runtimeNode } from '../lambda/lambda-runner';
import { synthesize } from '../lambda/synth';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import type { BenchSettings } from './bench-settings';
import { namesPet, type BenchRequests } from './bench-events';
import { buildFloors, FLOOR_BUILDS, type FloorBuild } from './floors';
import { progress } from './format';
import { seedPets, storeIterationPets } from './seed';
import type { ApiFunctionName } from '../../shared/facts/function-names';

const TABLES = { pets: 'bench-pets', apiKeys: 'bench-api-keys', idempotency: 'bench-idempotency' };
const CURSOR_SECRET = 'bench-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz';

/** What every section measures with: the synthesized functions and their floors, over a seeded dynalite. */
export interface BenchSetup {
  /** The Node binary of the Lambda runtime's major version, and its `--version`. */
  readonly node: string;
  readonly nodeVersion: string;
  readonly documents: DynamoDBDocumentClient;
  /** The pets seeded to the first of the settings' table sizes. */
  readonly pets: readonly PetRecord[];
  readonly requests: BenchRequests;
  /** Each stage's functions, by stage name. */
  readonly assets: ReadonlyMap<string, ReadonlyMap<ApiFunctionName, FunctionAsset>>;
  readonly productionAssets: ReadonlyMap<ApiFunctionName, FunctionAsset>;
  readonly local: LocalResources;
  /** The task root of a function's floor, built as the functions are or as another reference (tools/bench/floors.ts). */
  floorOf(name: ApiFunctionName, build?: FloorBuild): string;
  /** Keys nobody has used yet: each is a cache miss for the authorizer. */
  issueKeys(count: number): Promise<string[]>;
  /**
   * Iteration indices (tools/bench/bench-events.ts, benchEvent) no run was handed yet, so no request a run sends was
   * already served by another: a function and its floor never share an index. When the function's request names a pet,
   * each index's pet is stored first.
   */
  iterationsFor(name: ApiFunctionName, count: number): Promise<number[]>;
  /** Iteration indices no run was handed yet, as iterationsFor hands them, storing no pet. */
  indices(count: number): number[];
  close(): Promise<void>;
}

export async function setUpBench(settings: BenchSettings): Promise<BenchSetup> {
  const node = runtimeNode();
  progress(`synthesizing the app (Node ${process.version} here, the functions run on ${node})`);
  const synthesis = synthesize({ stages });
  const dynamo = await startDynalite({ port: 0 });
  const client = createLocalClient(dynamo.endpoint);
  const close = async () => {
    client.destroy();
    synthesis.dispose();
    await dynamo.close();
  };
  try {
    await ensureTables(client, TABLES);
    const documents = documentClientOver(client);
    const keyStore = new DynamoApiKeyStore(documents, TABLES.apiKeys);
    const pets = await seedPets(documents, TABLES.pets, settings.petCounts[0]!, 1);
    const { apiKey } = await issueApiKey(keyStore, 'bench');
    const assets = new Map(stages.map((stage) => [stage.name, functionAssets(synthesis, synthesis.stage(stage.name))]));
    const productionAssets = assets.get(production.name)!;
    const floors = new Map<FloorBuild, Map<ApiFunctionName, string>>();
    for (const build of Object.keys(FLOOR_BUILDS) as FloorBuild[])
      floors.set(build, await buildFloors(API_FUNCTIONS, synthesis.outdir, build));
    let iterated = 0;
    const indices = (count: number) => {
      iterated += count;
      return Array.from({ length: count }, (_, index) => iterated - count + index);
    };
    return {
      node,
      nodeVersion: execFileSync(node, ['--version'], { encoding: 'utf8' }).trim(),
      documents,
      pets,
      requests: { apiKey },
      assets,
      productionAssets,
      local: { tables: TABLES, dynamoDbEndpoint: dynamo.endpoint, cursorSecret: CURSOR_SECRET },
      floorOf: (name, build = 'alike') => floors.get(build)!.get(name)!,
      async issueKeys(count) {
        const keys: string[] = [];
        for (let start = 0; start < count; start += 50) {
          const batch = await Promise.all(Array.from({ length: Math.min(50, count - start) }, () => issueApiKey(keyStore, 'bench')));
          keys.push(...batch.map((issued) => issued.apiKey));
        }
        return keys;
      },
      async iterationsFor(name, count) {
        const handed = indices(count);
        if (namesPet(name)) await storeIterationPets(documents, TABLES.pets, handed);
        return handed;
      },
      indices,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
