import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { stages } from '../infra/stages';
import { createLocalClient, DEFAULT_DYNAMODB_PORT, LOCAL_LISTING, LOCAL_STAGE_NAME, LOCAL_TABLES } from '../local/dynamodb-local';
import { PROJECT_ROOT } from '../shared/facts/project-layout';
import { LISTING_SHARDS, writeShardsOf } from '../shared/facts/listing';
import { documentClientOver } from '../shared/dynamodb/dynamodb-client';
import { type BackfillCounts, backfillListing, DEFAULT_BACKFILL_CONCURRENCY, type ScanPosition } from '../shared/dynamodb/listing-backfill';
import { findDeployedStage, requireOutput, StageLookupError } from './deployed-stage';

/**
 * `npm run migrate -- --stage <name>` (or `--local`): gives every pet in a stage's pets table the
 * listing attributes of the shards the stage's creates write (shared/dynamodb/listing-backfill.ts), resumably: the
 * position after each finished page is kept in a checkpoint file, and the next run starts there.
 */
const usage = `Usage: npm run migrate -- <where> [options]

Gives every pet the listing attributes of the stage's listing shards (collection, createdKey,
statusShard), so the sharded listing indexes hold every pet. Items already right are not written:
a second run writes nothing. Resumes from its checkpoint (migrations/<stage>.json) unless --restart.

Where (exactly one):
  --local            the running local API (npm start): http://127.0.0.1:$DYNAMODB_PORT (default ${DEFAULT_DYNAMODB_PORT}),
                     or --endpoint <url>; ${LOCAL_LISTING.shards} shards
  --stage <name>     a deployed stage (${stages.map((stage) => stage.name).join(', ')}): its pets table and region come from the
                     stack's PetsTableName output, the shards its creates write from infra/stages.ts
                     (listing.writeShards, else listing.shards); needs credentials for the
                     stage's account with the stack's ListingMigrationPolicyArn policy attached
                     (dynamodb:Scan and dynamodb:UpdateItem on the table)

Options:
  --restart            ignore the checkpoint and scan the table from its start
  --checkpoint <file>  keep the checkpoint there instead of migrations/<stage>.json
  --shards <n>         spread the pets over n shards instead of the stage's (${LISTING_SHARDS.min} to ${LISTING_SHARDS.max}), e.g. to
                       rehearse a count against the local API
  --concurrency <n>    updates in flight at once (default ${DEFAULT_BACKFILL_CONCURRENCY})`;

/** Where checkpoints are kept: git-ignored, one file per stage. */
export const CHECKPOINT_DIR = join(PROJECT_ROOT, 'migrations');

/** What a run leaves behind when it stops before the table's end. */
interface Checkpoint {
  readonly table: string;
  readonly shards: number;
  /** The Scan's position after the last page whose updates all completed. */
  readonly position: Record<string, unknown>;
  readonly counts: BackfillCounts;
  /** Seconds spent by the runs so far. */
  readonly seconds: number;
}

export interface MigrationOptions {
  readonly client: DynamoDBClient;
  readonly table: string;
  readonly shards: number;
  /** The checkpoint file: kept while the table is unfinished, removed once it is done. */
  readonly checkpointFile: string;
  /** Ignores the checkpoint and starts from the table's start. */
  readonly restart?: boolean;
  readonly concurrency?: number;
  /** Items per Scan page (tests); DynamoDB's 1 MB page when omitted. */
  readonly pageSize?: number;
  /** Stops the run (Ctrl-C): the updates in flight complete, the checkpoint keeps the last finished page. */
  readonly signal?: AbortSignal;
  /** Stops after this many pages (tests: a run cut short). */
  readonly maxPages?: number;
  /** Told one line on resuming or starting over. */
  readonly say?: (line: string) => void;
}

export interface MigrationResult extends BackfillCounts {
  readonly finished: boolean;
  /** Seconds of this run and the runs it resumed. */
  readonly seconds: number;
}

/** Runs the backfill from the checkpoint (or the start), keeping the checkpoint after each page. */
export async function migrateListing(options: MigrationOptions): Promise<MigrationResult> {
  const started = performance.now();
  const say = options.say ?? (() => {});
  let previous = options.restart ? undefined : await readCheckpoint(options.checkpointFile);
  if (previous !== undefined && (previous.table !== options.table || previous.shards !== options.shards)) {
    say(`The checkpoint was for table ${previous.table} at ${previous.shards} shards; starting from the table's start.`);
    previous = undefined;
  }
  if (previous !== undefined) say(`Resuming after ${previous.counts.scanned} pets scanned (${options.checkpointFile}).`);
  const base = previous?.counts ?? { scanned: 0, updated: 0, alreadyRight: 0, gone: 0 };
  const total = (counts: BackfillCounts): BackfillCounts => ({
    scanned: base.scanned + counts.scanned,
    updated: base.updated + counts.updated,
    alreadyRight: base.alreadyRight + counts.alreadyRight,
    gone: base.gone + counts.gone,
  });
  const seconds = () => (previous?.seconds ?? 0) + (performance.now() - started) / 1000;

  const result = await backfillListing(documentClientOver(options.client), options.table, {
    shards: options.shards,
    from: previous?.position,
    concurrency: options.concurrency,
    pageSize: options.pageSize,
    signal: options.signal,
    maxPages: options.maxPages,
    onPage: async (position: ScanPosition, counts) => {
      if (position === undefined) return;
      await writeCheckpoint(options.checkpointFile, {
        table: options.table,
        shards: options.shards,
        position,
        counts: total(counts),
        seconds: seconds(),
      });
    },
  });
  if (result.finished) await rm(options.checkpointFile, { force: true });
  return { ...total(result), finished: result.finished, seconds: seconds() };
}

/** The one line a run ends with. */
export function describeMigration(table: string, shards: number, result: MigrationResult): string {
  const counts = `${result.scanned} scanned, ${result.updated} updated, ${result.alreadyRight} already right`;
  const gone = result.gone > 0 ? `, ${result.gone} deleted meanwhile` : '';
  const time = `${result.seconds.toFixed(1)} s`;
  return result.finished
    ? `Migrated ${table} to ${shards} listing shards: ${counts}${gone} in ${time}.`
    : `Stopped part-way through ${table}: ${counts}${gone} in ${time}. Run the same command again to resume from the checkpoint.`;
}

async function readCheckpoint(file: string): Promise<Checkpoint | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Checkpoint;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`Cannot read the checkpoint ${file} (${error instanceof Error ? error.message : error}): delete it or pass --restart.`);
  }
}

/** Written beside and renamed over: a run killed mid-write leaves the previous checkpoint whole. */
async function writeCheckpoint(file: string, checkpoint: Checkpoint): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(`${file}.tmp`, `${JSON.stringify(checkpoint, null, 2)}\n`);
  await rename(`${file}.tmp`, file);
}

/** The table to migrate, its shard count, and how to reach it. */
interface Target {
  readonly client: DynamoDBClient;
  readonly table: string;
  readonly shards: number;
  readonly stageName: string;
  /** What to add when the table cannot be used. */
  readonly unreachable: string;
}

/** One line: the refusal and where the usage is. */
function fail(message: string): never {
  process.stderr.write(`${message} (npm run migrate -- --help)\n`);
  process.exit(2);
}

async function resolveTarget(options: { local?: boolean; stage?: string; endpoint?: string }): Promise<Target> {
  if (options.local && options.stage !== undefined) fail('Choose one: --local or --stage <name>, not both.');
  if (options.local) {
    const endpoint = options.endpoint ?? `http://127.0.0.1:${process.env.DYNAMODB_PORT || DEFAULT_DYNAMODB_PORT}`;
    return {
      client: createLocalClient(endpoint, { maxAttempts: 2 }),
      table: LOCAL_TABLES.pets,
      shards: LOCAL_LISTING.shards,
      stageName: LOCAL_STAGE_NAME,
      unreachable: `Is npm start running, with its DynamoDB at ${endpoint}?`,
    };
  }
  if (options.stage === undefined) fail('Say which table: --local for the running npm start, or --stage <name> for a deployed stage.');
  const deployed = await findDeployedStage(options.stage, 'ListingMigrationPolicyArn');
  return {
    // Throttling is expected on a real table: adaptive retry slows the run down instead of failing it.
    client: new DynamoDBClient({ region: deployed.region, retryMode: 'adaptive', maxAttempts: 10 }),
    table: requireOutput(deployed, 'PetsTableName'),
    shards: writeShardsOf(deployed.stage.listing),
    stageName: deployed.stage.name,
    unreachable: 'The checkpoint keeps the last finished page: run the same command again to resume.',
  };
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions();
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
  const { values: options } = parsed;
  if (options.help) {
    process.stdout.write(`${usage}\n`);
    return;
  }
  const concurrency = options.concurrency === undefined ? undefined : Number(options.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 256)) {
    fail('--concurrency must be a whole number from 1 to 256.');
  }
  const shards = options.shards === undefined ? undefined : Number(options.shards);
  if (shards !== undefined && !(Number.isInteger(shards) && shards >= LISTING_SHARDS.min && shards <= LISTING_SHARDS.max)) {
    fail(`--shards must be a whole number from ${LISTING_SHARDS.min} to ${LISTING_SHARDS.max}.`);
  }
  let target: Target;
  try {
    target = await resolveTarget(options);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof StageLookupError ? 2 : 1);
  }
  // The first Ctrl-C lets the updates in flight finish, so the checkpoint is exact; a second one is Node's default.
  const stop = new AbortController();
  process.once('SIGINT', () => {
    process.stderr.write('Stopping after the updates in flight…\n');
    stop.abort();
  });
  try {
    const result = await migrateListing({
      client: target.client,
      table: target.table,
      shards: shards ?? target.shards,
      checkpointFile: resolve(options.checkpoint ?? join(CHECKPOINT_DIR, `${target.stageName}.json`)),
      restart: options.restart,
      concurrency,
      signal: stop.signal,
      say: (line) => process.stdout.write(`${line}\n`),
    });
    process.stdout.write(`${describeMigration(target.table, shards ?? target.shards, result)}\n`);
    if (!result.finished) process.exitCode = 130;
  } catch (error) {
    process.stderr.write(`Could not migrate ${target.table}: ${error instanceof Error ? error.message : String(error)}\n`);
    process.stderr.write(`${target.unreachable}\n`);
    process.exitCode = 1;
  } finally {
    target.client.destroy();
  }
}

function parseOptions() {
  return parseArgs({
    options: {
      local: { type: 'boolean' },
      stage: { type: 'string' },
      endpoint: { type: 'string' },
      restart: { type: 'boolean' },
      checkpoint: { type: 'string' },
      concurrency: { type: 'string' },
      shards: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) await main();
