import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import { trafficRequest } from '../../functions/deployment-traffic/traffic-requests';
import { CLOSED_PORT } from '../../local/addresses';
import { createLocalClient, ensureTables, startDynalite } from '../../local/dynamodb-local';
import { generateApiKey, generateKeyId, hashApiKey } from '../../shared/domain/auth/api-keys';
import { issueApiKey } from '../../shared/domain/auth/manage-api-keys';
import { DynamoApiKeyStore } from '../../shared/dynamodb/dynamo-api-key-store';
import { documentClientOver } from '../../shared/dynamodb/dynamodb-client';
import { ENV } from '../../shared/facts/environment';
import type { ApiFunctionName, RouteFunctionName } from '../../shared/facts/function-names';
import { ANSWER_DIMENSIONS, JUDGED_STATUSES } from '../../shared/facts/metric-names';
import { OPERATION_IDS, routes, type OperationId } from '../../shared/facts/routes';
import { OPERATIONS } from '../../shared/operations/operations';
import type { RequestParts } from '../../shared/checks/check-requests';
import { namesPet, operationEvent } from '../../tools/bench/bench-events';
import { seedPets } from '../../tools/bench/seed';
import { DIRECT_INVOCATION_LIMIT_MS } from '../../shared/facts/time-budget';
import { authorizerEvent, httpEvent } from '../../tools/lambda/events';
import { functionAssets } from '../../tools/lambda/function-assets';
import { invokeBundle, runtimeNode } from '../../tools/lambda/lambda-runner';
import type { Synthesis, SynthesizedStage } from '../../tools/lambda/synth';
import { physicalNameOf, VERSIONS, type BundleSignals, type Caller, type DeploymentRequest } from './alarm-evaluation';

/**
 * Each function's per-version signals, from running its bundle as deployed (tools/lambda/lambda-runner.ts): the
 * stage's environment, the function's name in the simulated account, AWS_LAMBDA_FUNCTION_VERSION set to each
 * version the evaluation runs, and a store that is dynalite, a port that refuses, or a table that does not exist.
 * What each route function writes for a success, a store failure and a refusal, what the authorizer answers each
 * kind of key with, and how the healthy version answers the deployment traffic's requests. Seconds of processes:
 * compute it once per test file.
 */

/** A pets table that does not exist: the store fails for this version alone, which answers 500. */
const MISSING_TABLE = 'signals-missing-table';
const CURSOR_SECRET = 'signals-cursor-secret-0123456789abcdefghijklmnopqrstuvwxyz0123';
const UNKNOWN_PET_ID = 4_503_599_627_370_497;
/** A query parameter no operation reads: every operation refuses it 400 invalid_parameter. */
const UNKNOWN_QUERY_PARAMETER = 'signalsUnknown';
/** The judged statuses whose real line stands for one a bundle cannot give: a refusal's first. */
const REFUSALS_FIRST = [400, 404, 401, 503, 500] as const;
/**
 * How long the deployment traffic's bundle sends requests: its run ends once less than a request's limit and its
 * last line are left (functions/deployment-traffic/traffic-run.ts), so a timeout this much above that is a few requests.
 */
const TRAFFIC_RUN_MS = 2_000;
const TRAFFIC_RESERVE_MS = DIRECT_INVOCATION_LIMIT_MS + 5_000;
/** Processes at once: the machine's other work keeps its cores. */
const PARALLEL_RUNS = 2;

type Store = 'dynalite' | 'unreachable' | 'missing table';

/** One request a bundle is run with, and the store it meets. */
interface Probe {
  readonly store: Store;
  readonly requestId: string;
  /** Its event under `requestId`, every path parameter naming `petId`; made again for the warm-up. */
  readonly event: (petId: number, requestId: string) => unknown;
  /**
   * Its path names a pet stored for each sending of it alone, the warm-up's included, as a request may consume
   * its pet; otherwise one no pet has.
   */
  readonly storedPet?: boolean;
  /** One of the deployment traffic's requests, whose answer the signals keep in turn. */
  readonly deploymentTraffic?: true;
}

/** A request's answer, with the metric lines the bundle wrote for it. */
interface Answered {
  readonly probe: Probe;
  readonly result: any;
  readonly lines: string[];
}

export async function bundleSignals(
  synthesis: Pick<Synthesis, 'outdir'>,
  stage: SynthesizedStage,
  functionNames: Readonly<Record<ApiFunctionName, string>>,
): Promise<BundleSignals> {
  const node = runtimeNode();
  const dynamo = await startDynalite({ port: 0 });
  const client = createLocalClient(dynamo.endpoint);
  try {
    const tables = { pets: 'signals-pets', apiKeys: 'signals-api-keys', idempotency: 'signals-idempotency' };
    await ensureTables(client, tables);
    const keys = new DynamoApiKeyStore(documentClientOver(client), tables.apiKeys);
    // A client's key, as `npm run keys` issues it (no expiry), and a key with one, as the hook's check keys have.
    const clientKey = (await issueApiKey(keys, 'signals-client')).apiKey;
    const expiringKey = generateApiKey();
    await keys.add({
      keyId: generateKeyId(),
      keyHash: hashApiKey(expiringKey),
      name: 'signals-check',
      createdAt: new Date().toISOString(),
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    let nextPetId = 1;
    const documents = documentClientOver(client);
    const storePet = async () => (await seedPets(documents, tables.pets, 1, nextPetId++))[0]!.id;
    const eventOf = async (probe: Probe, requestId: string) =>
      probe.event(probe.storedPet === true ? await storePet() : UNKNOWN_PET_ID, requestId);

    const assets = functionAssets(synthesis, stage);
    let warmUps = 0;
    /** A version's bundle over its probes, one process per store each meets, every answer with its lines. */
    const run = async (fn: ApiFunctionName, version: string, probes: readonly Probe[]): Promise<Answered[]> => {
      const answered: Answered[] = [];
      for (const store of ['dynalite', 'unreachable', 'missing table'] as const) {
        const meeting = probes.filter((probe) => probe.store === store);
        if (meeting.length === 0) continue;
        const asset = assets.get(fn)!;
        const env = {
          ...asset.environment({
            tables,
            dynamoDbEndpoint: store === 'unreachable' ? `http://127.0.0.1:${CLOSED_PORT}` : dynamo.endpoint,
            cursorSecret: CURSOR_SECRET,
          }),
          AWS_LAMBDA_FUNCTION_NAME: functionNames[fn],
          AWS_LAMBDA_FUNCTION_VERSION: version,
          ...(store === 'missing table' ? { [ENV.petsTable]: MISSING_TABLE } : {}),
        };
        // The first request warms the instance up: its lines (a cold start's among them) are nobody's answer.
        const warmUp = await eventOf(meeting[0]!, `signals-warm-up-${warmUps++}`);
        const events = await Promise.all(meeting.map((probe) => eventOf(probe, probe.requestId)));
        const { results, stdout } = await invokeBundle(node, { taskRoot: asset.taskRoot, env, events: [warmUp, ...events] });
        const linesOf = new Map<string, string[]>();
        for (const line of stdout.split('\n').filter((text) => text.includes('"_aws"'))) {
          const requestId = String((JSON.parse(line) as { requestId?: unknown }).requestId);
          linesOf.set(requestId, [...(linesOf.get(requestId) ?? []), line]);
        }
        meeting.forEach((probe, index) => {
          answered.push({ probe, result: results[index + 1], lines: linesOf.get(probe.requestId) ?? [] });
        });
      }
      return answered;
    };

    const answers: Record<string, Record<string, Record<string, string[]>>> = {};
    const authorizer: Record<string, Record<string, Record<string, unknown>>> = {};
    const deploymentTraffic: Record<string, DeploymentRequest[]> = {};
    /** A version's probes of a route function: the first lines of each status it answered, and its answers to the deployment traffic. */
    const probeRoute = async (fn: RouteFunctionName, version: string, probes: readonly Probe[]) => {
      const byStatus = slot(
        slot(answers, fn, () => ({})),
        version,
        () => ({}),
      );
      for (const { probe, result, lines } of await run(fn, version, probes)) {
        const status = (result as { statusCode: number }).statusCode;
        slot(byStatus, String(status), () => lines);
        if (probe.deploymentTraffic && version === VERSIONS.new) slot(deploymentTraffic, fn, () => []).push(deploymentRequest(fn, status));
      }
    };

    const nowhere = (_petId: number, requestId: string) =>
      withRequestId(httpEvent({ routeKey: '$default', rawPath: '/v1/nowhere' }), requestId);
    /** The deployment traffic's requests to a function as functions/deployment-traffic/ builds them, in turn, each path naming its own pet. */
    const traffic = (fn: ApiFunctionName, version: string, storedPet = false): Probe[] =>
      [0, 1].map((index) => ({
        store: 'dynalite',
        deploymentTraffic: true,
        storedPet,
        requestId: `traffic-${fn}-${version}-${index}`,
        event: (petId, requestId) =>
          withRequestId(
            trafficRequest(fn, index, {
              runId: `deployment-traffic-signals-${version}`,
              unknownApiKey: generateApiKey(),
              petIds: [petId],
              unknownPetId: UNKNOWN_PET_ID,
              now: new Date(),
            }),
            requestId,
          ),
      }));
    /**
     * An operation's requests, from its file of shared/operations/: its bench request, as each store meets it, and a
     * refusal, that request on a pet no pet has where its path names one (404), else with a query parameter no operation has (400).
     */
    const operationProbes = (operationId: OperationId, version: string): Probe[] => {
      const { request } = OPERATIONS[operationId].bench;
      const storedPet = namesPet(operationId);
      const sending =
        (parts: RequestParts) =>
        (petId: number, requestId: string): unknown =>
          withRequestId(operationEvent(operationId, parts, petId), requestId);
      const refused = storedPet ? request : { ...request, query: { ...request.query, [UNKNOWN_QUERY_PARAMETER]: '1' } };
      return [
        { store: 'dynalite', storedPet, requestId: `${operationId}-${version}`, event: sending(request) },
        { store: 'dynalite', requestId: `refused-${operationId}-${version}`, event: sending(refused) },
        { store: 'unreachable', storedPet, requestId: `${operationId}-unreachable-${version}`, event: sending(request) },
        { store: 'missing table', storedPet, requestId: `${operationId}-missing-${version}`, event: sending(request) },
        ...traffic(operationId, version, storedPet),
      ];
    };

    const probeAuthorizer = async (version: string) => {
      // A client's key, a key with an expiry, an unknown key, none, the deployment's, and a lookup the store refuses.
      const sent = (event: unknown) => (_petId: number, requestId: string) => withRequestId(event, requestId);
      const keyed: Array<Omit<Probe, 'requestId'>> = [
        { store: 'dynalite', event: sent(authorizerEvent(`Bearer ${clientKey}`)) },
        { store: 'dynalite', event: sent(authorizerEvent(`Bearer ${expiringKey}`)) },
        { store: 'dynalite', event: sent(authorizerEvent(`Bearer ${generateApiKey()}`)) },
        { store: 'dynalite', event: sent(authorizerEvent()) },
        ...traffic('authorizer', version),
        { store: 'unreachable', event: sent(authorizerEvent(`Bearer ${generateApiKey()}`)) },
      ];
      const probes = keyed.map((probe, index) => ({ ...probe, requestId: `authorizer-${version}-${index}` }));
      for (const { probe, result } of await run('authorizer', version, probes)) {
        const context = (result as { context: Record<string, unknown> }).context;
        if (context.version !== version) throw new Error(`The authorizer's version ${version} answered as ${String(context.version)}`);
        slot(
          slot(authorizer, version, () => ({})),
          String(context.outcome),
          () => context,
        );
        if (probe.deploymentTraffic && version === VERSIONS.new) {
          slot(deploymentTraffic, 'authorizer', () => []).push({ caller: callerOf(String(context.outcome)) });
        }
      }
    };
    // No request waits on another's writes: each that names a pet is sent one stored for it alone.
    await pool(
      Object.values(VERSIONS).flatMap((version) => [
        () => probeAuthorizer(version),
        ...OPERATION_IDS.map((operationId) => () => probeRoute(operationId, version, operationProbes(operationId, version))),
        () =>
          probeRoute('routeNotFound', version, [
            { store: 'dynalite', requestId: `nowhere-${version}`, event: nowhere },
            // It reads no store and answers every accepted request its own 404: a request it cannot read is its only failure.
            { store: 'dynalite', requestId: `unreadable-${version}`, event: (petId, requestId) => withoutHttp(nowhere(petId, requestId)) },
            ...traffic('routeNotFound', version),
          ]),
      ]),
    );

    // The authorizer's verdicts on the deployment's own requests reach no access log: the deployment traffic counts them.
    const deploymentTrafficCounts: Record<string, Record<string, string[]>> = {};
    await pool(
      Object.values(VERSIONS).map((version) => async () => {
        deploymentTrafficCounts[version] = await deploymentTrafficLines(node, synthesis, stage, version, authorizer[version]!);
      }),
    );

    for (const [fn, versions] of Object.entries(answers)) {
      for (const [version, byStatus] of Object.entries(versions)) {
        const success = String(routes.find((route) => route.operationId === fn)?.successStatus ?? 404);
        if (byStatus[success] === undefined) throw new Error(`${fn} version ${version} never succeeded`);
        const real = REFUSALS_FIRST.map((status) => byStatus[String(status)]).find((lines) => lines !== undefined && lines.length > 0);
        if (real === undefined) throw new Error(`${fn} version ${version} wrote no line for any judged answer`);
        for (const status of JUDGED_STATUSES) {
          // A status its bundle cannot be made to give (a regression's 401 to an accepted key, routeNotFound's 503): the
          // real line of another judged answer of the same version, a refusal's if it gave one, its status set to this one.
          slot(byStatus, String(status), () => real.map((line) => withStatus(line, status)));
        }
      }
    }
    return { answers, authorizer, deploymentTraffic, deploymentTrafficCounts };
  } finally {
    client.destroy();
    await dynamo.close();
  }
}

/**
 * The deployment traffic's bundle, run for a few of its requests to the authorizer against a CodeDeploy whose
 * deployment goes on and a Lambda whose `version` answers each as the authorizer's bundle did, a keyed request
 * `invalid` and `unavailable` in turn: the lines it writes for those verdicts, by status.
 */
async function deploymentTrafficLines(
  node: string,
  synthesis: Pick<Synthesis, 'outdir'>,
  stage: SynthesizedStage,
  version: string,
  verdicts: Readonly<Record<string, Record<string, unknown>>>,
): Promise<Record<string, string[]>> {
  const keyed = ['invalid', 'unavailable'].map((outcome) => verdicts[outcome]!);
  let keyedSoFar = 0;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (String(request.headers['x-amz-target']).endsWith('.GetDeployment')) {
      const deploymentInfo = { status: 'InProgress', deploymentConfigName: 'CodeDeployDefault.LambdaCanary10Percent5Minutes' };
      response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ deploymentInfo }));
      return;
    }
    const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { headers?: Record<string, string> };
    const context = event.headers?.authorization === undefined ? verdicts.missing : keyed[keyedSoFar++ % keyed.length];
    response
      .writeHead(200, { 'content-type': 'application/json', 'x-amz-executed-version': version })
      .end(JSON.stringify({ isAuthorized: true, context }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const hook = stage.stack.deploymentTraffic.function;
    const resource = stage.json.Resources[stage.stack.getLogicalId(hook.node.defaultChild as CfnElement)]!;
    const taskRoot = join(synthesis.outdir, resource.Metadata!['aws:asset:path']);
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const env = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LAMBDA_TASK_ROOT: taskRoot,
      AWS_LAMBDA_FUNCTION_NAME: physicalNameOf(stage.stack.getLogicalId(hook.node.defaultChild as CfnElement)),
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(resource.Properties!.MemorySize),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      FUNCTION_TIMEOUT_MS: String(TRAFFIC_RESERVE_MS + TRAFFIC_RUN_MS),
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'signals',
      AWS_SECRET_ACCESS_KEY: 'signals',
      AWS_ENDPOINT_URL_CODEDEPLOY: endpoint,
      AWS_ENDPOINT_URL_LAMBDA: endpoint,
      ...Object.fromEntries(
        Object.entries(resource.Properties!.Environment.Variables as Record<string, unknown>).map(([name, value]) => [
          name,
          rendered(value),
        ]),
      ),
    };
    const { stdout } = await invokeBundle(node, { taskRoot, env, events: [{ deploymentId: 'd-SIGNALS', function: 'authorizer' }] });
    const byStatus: Record<string, string[]> = {};
    for (const line of stdout.split('\n').filter((text) => text.includes('"_aws"'))) {
      const status = String((JSON.parse(line) as Record<string, unknown>)[ANSWER_DIMENSIONS.status]);
      slot(byStatus, status, () => [line]);
    }
    for (const status of ['401', '503']) {
      if (byStatus[status] === undefined) throw new Error(`The deployment traffic wrote no line for the authorizer's ${status}`);
    }
    return byStatus;
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** A template value as the simulated account has it: a Ref the resource's name, an Fn::Join its parts joined. */
function rendered(value: unknown): string {
  if (typeof value === 'string') return value;
  const record = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] };
  if (record.Ref !== undefined) return physicalNameOf(record.Ref);
  if (record['Fn::Join'] !== undefined) return record['Fn::Join'][1].map(rendered).join(record['Fn::Join'][0]);
  throw new Error(`Cannot render ${JSON.stringify(value)}`);
}

/** What the deployment traffic's request is to the simulation, by the healthy version's answer. */
function deploymentRequest(fn: RouteFunctionName, status: number): DeploymentRequest {
  const success = routes.find((route) => route.operationId === fn)?.successStatus ?? 404;
  if (status === success) return { caller: 'valid key' };
  if (status === 400 || status === 404) return { caller: 'valid key', refused: status };
  throw new Error(`The deployment traffic's request to ${fn} was answered ${status}`);
}

/** The key a deployment traffic request to the authorizer carried, by the healthy version's verdict. */
function callerOf(outcome: string): Caller {
  if (outcome === 'invalid') return 'unknown key';
  if (outcome === 'missing') return 'no key';
  throw new Error(`The deployment traffic's request to the authorizer was answered ${outcome}`);
}

/** The value under `key`, made first when there is none. */
function slot<T>(record: Record<string, T>, key: string, make: () => T): T {
  if (!(key in record)) record[key] = make();
  return record[key]!;
}

function withStatus(line: string, status: number): string {
  return JSON.stringify({ ...(JSON.parse(line) as Record<string, unknown>), [ANSWER_DIMENSIONS.status]: String(status) });
}

function withRequestId<T>(event: T, requestId: string): T {
  const record = event as { requestContext: Record<string, unknown> };
  return { ...record, requestContext: { ...record.requestContext, requestId } } as T;
}

function withoutHttp<T>(event: T): T {
  const { http: _http, ...requestContext } = (event as { requestContext: Record<string, unknown> }).requestContext;
  return { ...(event as object), requestContext } as T;
}

/** Runs the tasks PARALLEL_RUNS at a time. */
async function pool(tasks: ReadonlyArray<() => Promise<unknown>>): Promise<void> {
  const waiting = [...tasks];
  await Promise.all(
    Array.from({ length: PARALLEL_RUNS }, async () => {
      for (let task = waiting.shift(); task !== undefined; task = waiting.shift()) await task();
    }),
  );
}
