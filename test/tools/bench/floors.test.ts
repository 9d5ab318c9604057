import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalClient, prepareLocalStage, startDynalite, type LocalDynamoDb } from '../../../local/dynamodb-local';
import { issueApiKey } from '../../../shared/domain/auth/manage-api-keys';
import { DynamoApiKeyStore } from '../../../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../../../shared/dynamodb/dynamodb-client';
import { ENV } from '../../../shared/facts/environment';
import { API_FUNCTIONS, fileNameOf, type ApiFunctionName } from '../../../shared/facts/function-names';
import { FUNCTIONS_DIR, PROJECT_ROOT } from '../../../shared/facts/project-layout';
import { ANSWER_CLASSES, type AnswerStep } from '../../../tools/bench/answer-classes';
import { benchEvent, namesPet, outcomeOf } from '../../../tools/bench/bench-events';
import { issuesCommand } from '../../../tools/bench/bench-functions';
import { buildFloors, FLOOR_BUILDS, type FloorBuild } from '../../../tools/bench/floors';
import { seedPets, storeIterationPets } from '../../../tools/bench/seed';
import { lambdaContext } from '../../../tools/lambda/events';
import { snapshotEnv } from '../../helpers/env';

const work = mkdtempSync(join(tmpdir(), 'animal-store-floors-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const FLOORS_DIR = join(PROJECT_ROOT, 'tools', 'bench', 'floors');

describe("the bench's floors", () => {
  it.each(Object.keys(FLOOR_BUILDS) as FloorBuild[])(
    'build %s for every function behind the API, each into its own bundle',
    async (build) => {
      const floors = await buildFloors(API_FUNCTIONS, work, build);
      expect([...floors.keys()].sort()).toEqual([...API_FUNCTIONS].sort());
      for (const taskRoot of floors.values()) expect(readdirSync(taskRoot)).toEqual([FLOOR_BUILDS[build].file]);
      expect(new Set(floors.values()).size).toBe(API_FUNCTIONS.length);
    },
  );

  it.each(API_FUNCTIONS)("of %s bundle nothing of the project's code: npm packages and the floors' own module only", async (name) => {
    const ours = (await bundledInputs(name)).filter((input) => !/^(?:node_modules\/|tools\/bench\/floors\/)/.test(input));
    expect(ours).toEqual([]);
  });

  it.each(API_FUNCTIONS.filter((name) => !issuesCommand(name)))('of %s, which calls nothing, load no AWS SDK', async (name) => {
    expect((await bundledInputs(name)).filter((input) => /node_modules\/@(?:aws-sdk|smithy)\//.test(input))).toEqual([]);
  });
});

/** The files a function's floor bundles, repository-relative. */
async function bundledInputs(name: ApiFunctionName): Promise<string[]> {
  const { metafile } = await build({
    entryPoints: [join(FLOORS_DIR, `${fileNameOf(name)}-floor.ts`)],
    absWorkingDir: PROJECT_ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  return Object.keys(metafile.inputs);
}

/** One DynamoDB request as it went out: the operation and its parameters. */
type Sent = { readonly operation: string; readonly input: Record<string, any> };

describe("the bench's floors, run beside their functions against DynamoDB", () => {
  let dynamo: LocalDynamoDb;
  let client: ReturnType<typeof createLocalClient>;
  let recorder: Recorder;
  let restoreEnv: () => void;
  let apiKey: string;
  let storePet: () => Promise<void>;

  beforeAll(async () => {
    restoreEnv = snapshotEnv();
    dynamo = await startDynalite({ port: 0 });
    recorder = await startRecorder(dynamo.endpoint);
    const stage = await prepareLocalStage(dynamo.endpoint, 'floors-test-cursor-secret-0123456789abcdef');
    client = createLocalClient(dynamo.endpoint);
    const documents = documentClientOver(client);
    await seedPets(documents, stage[ENV.petsTable]!, 60, 1);
    storePet = () => storeIterationPets(documents, stage[ENV.petsTable]!, [0]);
    ({ apiKey } = await issueApiKey(new DynamoApiKeyStore(documents, stage[ENV.apiKeysTable]!), 'floors-test'));
    // Both sides read their environment as their module loads, as on a cold start.
    Object.assign(process.env, stage, {
      AWS_ENDPOINT_URL_DYNAMODB: recorder.endpoint,
      [ENV.logLevel]: 'ERROR',
      [ENV.metricsDisabled]: 'true',
    });
  });

  afterAll(async () => {
    restoreEnv?.();
    client?.destroy();
    await recorder?.close();
    await dynamo?.close();
  });

  /**
   * What one side sent to DynamoDB and answered, serving the function's typical bench request on its own: its pet
   * stored afresh first, so the floor meets the pet the function met even when the function consumed it.
   */
  async function serve(module: string, name: ApiFunctionName, event: unknown = benchEvent(name, { apiKey }, 0)) {
    const { handler } = (await import(module)) as { handler: (event: unknown, context: unknown) => Promise<any> };
    if (namesPet(name)) await storePet();
    recorder.sent.length = 0;
    const answer = await handler(event, lambdaContext());
    return { sent: [...recorder.sent], answer };
  }

  const functionModule = (name: ApiFunctionName) => join(PROJECT_ROOT, FUNCTIONS_DIR, `${fileNameOf(name)}.ts`);
  const floorModule = (name: ApiFunctionName) => join(FLOORS_DIR, `${fileNameOf(name)}-floor.ts`);
  /** What it answered: an HTTP body, none for a 204, or the authorizer's context. */
  const bodyOf = (answer: any): string | undefined =>
    answer.body ?? (answer.context === undefined ? undefined : JSON.stringify(answer.context));
  const parsed = (text: string | undefined) => (text === undefined ? undefined : JSON.parse(text));

  const steps = ANSWER_CLASSES.flatMap((answerClass) =>
    answerClass.steps.map((step: AnswerStep) => [`${answerClass.id}: ${step.name}`, answerClass.store, step] as const),
  );

  it.each(steps)(
    "of the answer class %s get the answer the function gives, sending the same calls, and the answer is the class's",
    async (_, store, step) => {
      recorder.refuse = store === 'unreachable';
      try {
        const fn = await serve(functionModule(step.name), step.name, step.event(0));
        const floor = await serve(floorModule(step.name), step.name, step.event(0));
        expect(outcomeOf(fn.answer)).toBe(step.outcome);
        expect(outcomeOf(floor.answer)).toBe(step.outcome);
        // Against a store that refuses every connection, as many attempts: the floor's client retries as the design's does.
        expect(floor.sent).toEqual(fn.sent);
        expect(parsed(bodyOf(floor.answer))).toEqual(parsed(bodyOf(fn.answer)));
        expect(bodyOf(floor.answer)?.length).toBe(bodyOf(fn.answer)?.length);
      } finally {
        recorder.refuse = false;
      }
    },
  );

  it('meet a store that refuses every connection with each attempt the design makes', async () => {
    recorder.refuse = true;
    try {
      const unreachable = steps.find(([, store]) => store === 'unreachable')!;
      const { sent } = await serve(floorModule(unreachable[2].name), unreachable[2].name, unreachable[2].event(0));
      expect(sent.length).toBeGreaterThan(1);
    } finally {
      recorder.refuse = false;
    }
  });

  it.each(API_FUNCTIONS)('of %s sends the parameters its function sends and answers the same body', async (name) => {
    const fn = await serve(functionModule(name), name);
    const floor = await serve(floorModule(name), name);

    if (name === 'createPet') {
      // A new pet each: the item's values are drawn at random, its attributes and their types are the design's.
      const shape = ({ operation, input }: Sent) => ({
        operation,
        input: {
          ...input,
          Item: Object.fromEntries(Object.entries(input.Item).map(([attribute, value]) => [attribute, Object.keys(value as object)])),
        },
      });
      expect(floor.sent.map(shape)).toEqual(fn.sent.map(shape));
      const withoutId = (body: string) => ({ ...JSON.parse(body), id: 0 });
      expect(withoutId(floor.answer.body)).toEqual(withoutId(fn.answer.body));
    } else {
      expect(floor.sent).toEqual(fn.sent);
      expect(parsed(bodyOf(floor.answer))).toEqual(parsed(bodyOf(fn.answer)));
      expect(bodyOf(floor.answer)?.length).toBe(bodyOf(fn.answer)?.length);
    }
    expect(floor.answer.statusCode).toBe(fn.answer.statusCode);
  });
});

interface Recorder {
  readonly endpoint: string;
  readonly sent: Sent[];
  /** While set, each request is kept and its connection dropped unanswered: a store the client cannot reach. */
  refuse: boolean;
  close(): Promise<void>;
}

/** A proxy in front of DynamoDB that keeps each request's operation and parameters. */
async function startRecorder(target: string): Promise<Recorder> {
  const upstream = new URL(target);
  const sent: Sent[] = [];
  const server = createServer(async (incoming, outgoing) => {
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    sent.push({ operation: String(incoming.headers['x-amz-target']).split('.').pop()!, input: JSON.parse(body.toString('utf8')) });
    if (recorder.refuse) {
      incoming.socket.destroy();
      return;
    }
    const forwarded = request(
      { host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
      (answer) => {
        outgoing.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const recorder: Recorder = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent,
    refuse: false,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  return recorder;
}
