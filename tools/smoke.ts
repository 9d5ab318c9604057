import { isDeepStrictEqual } from 'node:util';
import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { findLocalApi, findLocalStore, findOrExit } from '../local/addresses';
import { createLocalClient, LOCAL_TABLES } from '../local/dynamodb-local';
import { issueTemporaryLocalKey } from '../local/temporary-key';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { PETS_TABLE } from '../shared/dynamodb/pets-table';
import { messageOf } from '../shared/runtime/error-message';
import { parseCommandLine, usageFailure } from './command-line';
import { emergencyReleaseWarning, findDeployedStage, lookUpOrExit, requireOutput } from './deployed-stage';
import { PetListSchema, PetSchema } from '../shared/domain/pets/pet-output-schemas';
import { LIST_LIMIT, type NewPet, type Pet, type PetStatus } from '../shared/domain/pets/pet-schemas';
import { BASE_PATH, matchRoute, routes, type Route } from '../shared/facts/routes';
import { createClient } from '../shared/client/create-client';
import {
  anonymousListIsRefused,
  answerThrough,
  checkClient,
  checkSender,
  excerpt,
  expectError,
  expectShape,
  expectStatus,
  firstPage,
  listIsServed,
  runSteps,
  StepFailure,
  unknownPathIsNotFound,
  type Step,
} from '../shared/checks/api-checks';

/** `npm run smoke`: run after a deploy, between staging and production, to show the stage answers as the contract says. */
const DEFAULT_TIMEOUT_SECONDS = 10;
/** Followed by the run's time, so ops can tell the smoke pet from real pets. */
const SMOKE_PET_PREFIX = 'smoke-test';
/** getPet is deprecated: once no route serves GET at a pet's Location, the steps find the pet in the listing by status. */
const READS_ONE_PET = matchRoute('GET', `${BASE_PATH}/pets/1`) !== undefined;
/** The help and the leftover note say the API deletes nothing only while the route table has no DELETE. */
const HAS_DELETE_OPERATION = (routes as readonly Route[]).some((route) => route.method === 'DELETE');
/** Sold, so the smoke pet is never listed among the available ones, even when it cannot be deleted. */
const SMOKE_PET_STATUS: PetStatus = 'sold';
const SMOKE_QUERY = { status: SMOKE_PET_STATUS, limit: LIST_LIMIT.max };
const SMOKE_LISTING = `/pets?status=${SMOKE_QUERY.status}&limit=${SMOKE_QUERY.limit}`;
const SMOKE_KEY_NAME = 'npm run smoke --local';

const usage = `Usage: npm run smoke -- (--stage <name> | --local | --base-url <url>) --key <api key> [--timeout <seconds>]

Runs these steps against a stage and prints PASS or FAIL for each; exits 0 only if all pass:
  1. GET /pets without a key is 401 with the Error body (the authorizer is in front)
  2. GET /pets with the key is 200 with a list of pets
  3. POST /pets creates one pet (201 with Location), sent with an Idempotency-Key
  4. ${READS_ONE_PET ? 'GET <Location> returns that same pet' : `GET ${SMOKE_LISTING} lists that same pet`}
  5. an unknown path is 404 with the Error body
  6. with --stage or --local: the pet is deleted from the pets table, and ${READS_ONE_PET ? 'GET <Location> is 404' : 'the listing no longer has it'}

Where:
  --stage <name>       a deployed stage: its BaseUrl and PetsTableName come from the stack's outputs
                       (AWS credentials for the stage's account, allowed by the stack's
                       SmokeTestPolicyArn policy); the run cleans up after itself, and ends with
                       a warning on stderr if the stage runs an emergency release
  --local              npm start, found by the settings it read (PORT, HOST, DYNAMODB_*); cleans up after itself
  --base-url <url>     any other base URL, with or without the trailing ${BASE_PATH}; or set
                       SMOKE_BASE_URL. It cannot clean up: it prints the command that would
  --key <api key>      an API key of that stage; or set SMOKE_API_KEY (preferred), which keeps
                       the key out of your shell history if you set it without typing it on a
                       command line: read -rs SMOKE_API_KEY && export SMOKE_API_KEY. With --local
                       and no key, it issues one in the local store and revokes it when done
  --timeout <seconds>  time budget of each step (default ${DEFAULT_TIMEOUT_SECONDS})

What it leaves behind: nothing with --stage or --local. ${noDeleteSo('step 6')}
deletes step 3's pet from the table directly, and only a pet named "${SMOKE_PET_PREFIX} <time>" (the
delete is conditional on the name). With --base-url alone the pet stays: exactly one per run (a retry
inside the step reuses the Idempotency-Key), with status "sold", so it is never listed among
available pets; the run prints the command that removes it.`;

/** What follows, as a sentence: after "The API has no delete operation, so" while that holds. */
function noDeleteSo(followed: string): string {
  return HAS_DELETE_OPERATION ? followed[0]!.toUpperCase() + followed.slice(1) : `The API has no delete operation, so ${followed}`;
}

const fail: (message: string) => never = usageFailure(usage);

interface Cleanup {
  readonly client: DynamoDBDocumentClient;
  readonly table: string;
}

interface Settings {
  /** Ends in BASE_PATH, without a trailing slash. */
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly timeoutMs: number;
  /** Absent with --base-url: nothing to delete with. */
  readonly cleanup?: Cleanup;
  /** Revokes the key a keyless --local run issued for itself. */
  readonly revokeKey?: () => Promise<unknown>;
  /** Said last, on stderr: the stage runs an emergency release. */
  readonly warning?: string;
}

async function readSettings(): Promise<Settings> {
  const { values: options } = parseCommandLine(
    {
      options: {
        'base-url': { type: 'string' },
        stage: { type: 'string' },
        local: { type: 'boolean' },
        key: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    },
    usage,
  );
  const apiKey = (options.key ?? process.env.SMOKE_API_KEY)?.trim();
  if (!apiKey && !options.local) fail('Give an API key with --key <api key> or SMOKE_API_KEY.');
  const timeoutMs = parseTimeout(options.timeout);
  const { stage } = options;
  if (stage !== undefined && options.local) fail('Choose --stage or --local, not both.');
  if (stage !== undefined) {
    return lookUpOrExit(async () => {
      const deployed = await findDeployedStage(stage, 'SmokeTestPolicyArn');
      const cleanup = {
        client: documentClientOver(new DynamoDBClient({ region: deployed.stage.region, maxAttempts: 2 })),
        table: requireOutput(deployed, 'PetsTableName'),
      };
      const warning = emergencyReleaseWarning(deployed);
      const baseUrl = normalizeBaseUrl(options['base-url'] ?? requireOutput(deployed, 'BaseUrl'));
      return { baseUrl, apiKey: apiKey!, timeoutMs, cleanup, ...(warning === undefined ? {} : { warning }) };
    });
  }
  if (options.local) {
    const [api, store] = [findOrExit(findLocalApi, options['base-url'] ?? process.env.SMOKE_BASE_URL), findOrExit(findLocalStore)];
    process.stdout.write(`The local API at ${api.told}, its DynamoDB at ${store.told}\n`);
    const cleanup = { client: documentClientOver(createLocalClient(store.url, { maxAttempts: 2 })), table: LOCAL_TABLES.pets };
    const issued = apiKey ? undefined : await issueLocalKey(cleanup.client, store.told);
    return { baseUrl: normalizeBaseUrl(api.url), apiKey: issued?.apiKey ?? apiKey!, timeoutMs, cleanup, revokeKey: issued?.revoke };
  }
  const baseUrl = options['base-url'] ?? process.env.SMOKE_BASE_URL;
  if (!baseUrl) fail('Say which stage: --stage <name>, --local, or --base-url <url> (or SMOKE_BASE_URL).');
  return { baseUrl: normalizeBaseUrl(baseUrl), apiKey: apiKey!, timeoutMs };
}

/** A key in the running npm start's own keys table for a keyless --local run, as `npm run keys -- create --local` issues it. */
async function issueLocalKey(client: DynamoDBDocumentClient, store: string) {
  const key = await issueTemporaryLocalKey(client, SMOKE_KEY_NAME).catch((error: unknown) => {
    process.stderr.write(`Could not issue a key in the local API's DynamoDB at ${store}: ${messageOf(error)}. Is npm start running?\n`);
    process.exit(2);
  });
  process.stdout.write(`Issued ${key.keyId} in the local store for this run; it is revoked when the run ends.\n`);
  return key;
}

/** `https://host`, `https://host/v1` and `https://host/v1/` all name the same API. */
function normalizeBaseUrl(input: string): string {
  if (!URL.canParse(input))
    fail(`--base-url must be an http(s) URL such as https://abc123.execute-api.eu-west-1.amazonaws.com${BASE_PATH}; got "${input}".`);
  const url = new URL(input);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') fail(`--base-url must be an http or https URL; got "${input}".`);
  if (url.search || url.hash || url.username || url.password) {
    fail(`--base-url must be the API's address only, without credentials, query or fragment; got "${input}".`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path.endsWith(BASE_PATH) ? path : path + BASE_PATH}`;
}

function parseTimeout(input: string | undefined): number {
  if (input === undefined) return DEFAULT_TIMEOUT_SECONDS * 1000;
  const seconds = Number(input);
  if (!/^\d+(\.\d+)?$/.test(input) || seconds <= 0 || seconds > 60)
    fail(`--timeout must be a number of seconds from 0 to 60; got "${input}".`);
  return Math.round(seconds * 1000);
}

function defineSteps({ baseUrl, apiKey, timeoutMs, cleanup }: Settings) {
  const target = { baseUrl, apiKey, agent: SMOKE_PET_PREFIX };
  const send = checkSender(target, timeoutMs);
  const client = checkClient(target);
  // The create retries within its step's budget: a check client's single attempt would fail a stage a client can use.
  const creator = createClient({ baseUrl, apiKey, userAgent: `animal-store-${SMOKE_PET_PREFIX}`, timeoutMs });
  let created: { readonly pet: Pet; readonly location: string } | undefined;
  let deleted = false;

  const steps: Step[] = [
    anonymousListIsRefused(target, timeoutMs),
    listIsServed(target, timeoutMs),
    {
      title: 'POST /pets creates a pet, 201 with Location',
      async run(signal) {
        const newPet = {
          name: `${SMOKE_PET_PREFIX} ${new Date().toISOString()}`,
          categoryId: 1,
          status: SMOKE_PET_STATUS,
        } satisfies NewPet;
        // Retried as any client of the API should: after a lost answer, a 5xx, a 429 or a 409, with the same
        // Idempotency-Key, so the stage still ends with one pet; a passing step names the answers it retried.
        const retried: number[] = [];
        const answer = await answerThrough(`${baseUrl}/pets`, timeoutMs, signal, (options) =>
          creator.createPet(newPet, {
            ...options,
            onAnswer: (answered) => {
              options.onAnswer?.(answered);
              if (answered.status >= 300) retried.push(answered.status);
            },
          }),
        );
        expectStatus(answer, 201);
        const pet = expectShape(PetSchema, answer, 'the created pet');
        if (pet.name !== newPet.name || pet.categoryId !== newPet.categoryId || pet.status !== newPet.status) {
          throw new StepFailure(`the created pet differs from the one sent: ${excerpt(answer.text)}`);
        }
        const location = answer.headers.get('location');
        if (!location) throw new StepFailure('the 201 has no Location header');
        created = { pet, location };
        return `pet ${pet.id} at ${location}${retried.length > 0 ? `, after retrying ${retried.join(', ')}` : ''}`;
      },
    },
    {
      title: READS_ONE_PET ? 'GET <Location> returns the same pet' : `GET ${SMOKE_LISTING} lists the same pet`,
      needs: () => (created ? undefined : 'step 3 created no pet'),
      async run(signal) {
        const { pet, location } = created!;
        if (!READS_ONE_PET) {
          await untilListed(pet, true, signal);
          return `pet ${pet.id}`;
        }
        // The key goes only to the stage under test: a Location elsewhere is a failure, not a hop.
        if (!URL.canParse(location) || new URL(location).origin !== new URL(baseUrl).origin) {
          throw new StepFailure(`Location ${location} is not on ${new URL(baseUrl).origin}`);
        }
        const answer = await send(location, {}, signal);
        expectStatus(answer, 200);
        const fetched = expectShape(PetSchema, answer, 'a pet');
        if (!isDeepStrictEqual(fetched, pet)) throw new StepFailure(`expected ${JSON.stringify(pet)}, got ${excerpt(answer.text)}`);
        return `pet ${pet.id}`;
      },
    },
    unknownPathIsNotFound(target, timeoutMs),
  ];
  if (cleanup) {
    steps.push({
      title: `the smoke pet is deleted from the pets table, and ${READS_ONE_PET ? 'GET <Location> is 404' : 'the listing no longer has it'}`,
      needs: () => (created ? undefined : 'step 3 created no pet'),
      async run(signal) {
        const { pet, location } = created!;
        await deleteSmokePet(cleanup, pet, signal);
        deleted = true;
        if (READS_ONE_PET) expectError(await send(location, {}, signal), 404, 'not_found');
        else await untilListed(pet, false, signal);
        return `pet ${pet.id} removed from ${cleanup.table}`;
      },
    });
  }
  return { steps, created: () => created, deleted: () => deleted };

  // The listing reads an index, which DynamoDB updates a moment after the write: one read could miss the change.
  async function untilListed(pet: Pet, present: boolean, signal: AbortSignal): Promise<void> {
    for (;;) {
      const answer = await answerThrough(`${baseUrl}${SMOKE_LISTING}`, timeoutMs, signal, (options) =>
        firstPage(client, options, SMOKE_QUERY),
      );
      expectStatus(answer, 200);
      const listed = expectShape(PetListSchema, answer, 'a JSON array of pets').find((candidate) => candidate.id === pet.id);
      if (listed !== undefined && !isDeepStrictEqual(listed, pet)) {
        throw new StepFailure(`expected ${JSON.stringify(pet)}, got ${JSON.stringify(listed)}`);
      }
      if ((listed !== undefined) === present) return;
      if (signal.aborted) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new StepFailure(`pet ${pet.id} was ${present ? 'not listed' : 'still listed'} within ${timeoutMs / 1000} s`);
  }
}

/** Only a pet still carrying the smoke name is deleted from the table: a wrong id can never remove a real pet. */
async function deleteSmokePet({ client, table }: Cleanup, pet: Pet, signal: AbortSignal): Promise<void> {
  const command = new DeleteCommand({
    TableName: table,
    Key: { [PETS_TABLE.partitionKey]: pet.id },
    ConditionExpression: 'begins_with(#name, :prefix)',
    ExpressionAttributeNames: { '#name': 'name' },
    ExpressionAttributeValues: { ':prefix': `${SMOKE_PET_PREFIX} ` },
  });
  await client.send(command, { abortSignal: signal }).catch((error: unknown) => {
    if (error instanceof ConditionalCheckFailedException) throw new StepFailure(`pet ${pet.id} is not a smoke pet; left alone`);
    throw new StepFailure(`could not delete pet ${pet.id} from ${table}: ${messageOf(error)}`);
  });
}

async function runSmokeTest(settings: Settings): Promise<boolean> {
  const { steps, created, deleted } = defineSteps(settings);
  process.stdout.write(`Smoke test of ${settings.baseUrl}\n`);
  const results = await runSteps(steps, settings.timeoutMs, (result, index) => {
    const label = `${index + 1}/${steps.length}  ${result.title}`;
    if (result.passed) process.stdout.write(`PASS  ${label} (${result.detail}; ${result.ms} ms)\n`);
    else process.stdout.write(`FAIL  ${label}: ${result.detail}\n`);
  });
  const passed = results.filter((result) => result.passed).length;
  process.stdout.write(`\n${passed} of ${steps.length} steps passed.\n`);
  const pet = created()?.pet;
  if (pet && !deleted()) {
    process.stdout.write(
      `\nCreated pet ${pet.id} ("${pet.name}", status ${pet.status}). ${noDeleteSo('to remove the pet')}\n` +
        'from a deployed stage, delete it from its table, with PetsTableName from its stack outputs:\n\n' +
        `  aws dynamodb delete-item --table-name <PetsTableName> --key '{"id":{"N":"${pet.id}"}}'\n`,
    );
  }
  return passed === steps.length;
}

const settings = await readSettings();
const { hostname, protocol } = new URL(settings.baseUrl);
if (protocol === 'http:' && !['localhost', '127.0.0.1', '[::1]'].includes(hostname)) {
  process.stderr.write(`Warning: ${settings.baseUrl} is plain http: the API key crosses the network unencrypted.\n`);
}
try {
  process.exitCode = (await runSmokeTest(settings)) ? 0 : 1;
  // Said, not failed: the smoke test judges whether the stage answers as the contract says, and the runbook
  // runs it right after an emergency deploy to verify that deploy; a failure there would read as a broken rollback.
  if (settings.warning) process.stderr.write(`\n${settings.warning}\n`);
} finally {
  await settings.revokeKey?.().catch((error) => process.stderr.write(`Could not revoke the run's key: ${(error as Error).message}\n`));
  settings.cleanup?.client.destroy();
}
