import { Validations, type RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { FUNCTION_CATALOG } from '../shared/catalog/function-catalog';
import { ENV } from '../shared/facts/environment';
import { API_FUNCTIONS, type ApiFunctionName, type FunctionName } from '../shared/facts/function-names';
import { writeShardsOf, type ListingConfig } from '../shared/facts/listing';
import { ApiFunction, type LogLevel } from './api-function';
import type { CursorSecret } from './cursor-secret';
import { grantTables, type ApiKeysTable, type IdempotencyTable, type PetsTable } from './tables';

export interface ApiFunctionsProps {
  readonly petsTable: PetsTable;
  readonly apiKeysTable: ApiKeysTable;
  /** Records of Idempotency-Key requests, for the routes that honour the header. */
  readonly idempotencyTable: IdempotencyTable;
  /** Signs the cursors of paginated listings. */
  readonly cursorSecret: CursorSecret;
  /** How listings' indexes are spread and read: the functions that write or list pets read it. */
  readonly listing: ListingConfig;
  /** Memory of each function, in MB. */
  readonly memoryMiB: Readonly<Record<FunctionName, number>>;
  /** Application log level of every function. */
  readonly logLevel: LogLevel;
  /** CloudWatch namespace of the functions' business metrics. */
  readonly metricsNamespace: string;
  /** Concurrent executions reserved for the authorizer; none when undefined. */
  readonly authorizerReservedConcurrency?: number;
  /** Retention of every function's log group. */
  readonly logRetention: RetentionDays;
  /** What happens to the log groups when they leave the stack. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * Every function behind the API, each under its name (shared/catalog/function-catalog.ts): the environment
 * its configuration reads and the table actions its entry states, no more.
 */
export class ApiFunctions extends Construct {
  /** Every function, by its name. */
  readonly byName: ReadonlyMap<ApiFunctionName, ApiFunction>;

  constructor(scope: Construct, id: string, props: ApiFunctionsProps) {
    super(scope, id);
    const { listing } = props;
    if (writeShardsOf(listing) > listing.shards) {
      throw new Error(
        `listing.writeShards (${listing.writeShards}) of ${this.node.path} exceeds listing.shards (${listing.shards}): listings would miss the pets created in the shards they do not read.`,
      );
    }
    // What the stage gives the variables its functions read: each function gets those its configuration reads.
    const stageValues = {
      [ENV.petsTable]: props.petsTable.table.tableName,
      [ENV.apiKeysTable]: props.apiKeysTable.table.tableName,
      [ENV.idempotencyTable]: props.idempotencyTable.table.tableName,
      [ENV.cursorSecret]: props.cursorSecret.environmentValue(),
      [ENV.listingShards]: String(listing.shards),
      [ENV.writeShards]: String(writeShardsOf(listing)),
    };
    const tables = { pets: props.petsTable, apiKeys: props.apiKeysTable, idempotency: props.idempotencyTable };

    this.byName = new Map(
      API_FUNCTIONS.map((name) => {
        const fn = new ApiFunction(this, name, {
          name,
          stageValues,
          memoryMiB: props.memoryMiB[name],
          logLevel: props.logLevel,
          metricsNamespace: props.metricsNamespace,
          logRetention: props.logRetention,
          removalPolicy: props.removalPolicy,
          // It fronts every route: were it throttled, every request would fail, not just some.
          ...(name === 'authorizer' && props.authorizerReservedConcurrency !== undefined
            ? { reservedConcurrency: props.authorizerReservedConcurrency }
            : {}),
        });
        grantTables(fn.role, FUNCTION_CATALOG[name].tables, tables);
        acknowledgeSynchronousInvocation(fn);
        return [name, fn] as const;
      }),
    );
  }

  /** Every function, in the order of API_FUNCTIONS. */
  get all(): ApiFunction[] {
    return [...this.byName.values()];
  }

  /** The function of one name. */
  of(name: ApiFunctionName): ApiFunction {
    return this.byName.get(name)!;
  }
}

/** Findings that do not apply to a function API Gateway invokes synchronously and nothing else. */
function acknowledgeSynchronousInvocation(fn: ApiFunction): void {
  const validations = Validations.of(fn.function);
  validations.acknowledge({
    id: 'Serverless-LambdaDLQ',
    reason: 'Only API Gateway invokes it, synchronously: a failure is answered to the caller, there is no event to dead-letter.',
  });
  validations.acknowledge({
    id: 'Serverless-LambdaTracing',
    reason:
      'Decided by measurement (docs/observability.md): HTTP APIs cannot start X-Ray traces, so a trace would show the ' +
      "handler and its one DynamoDB call, which the access log, the REPORT line and DynamoDB's latency metrics already " +
      'show, at a cost in time to first response and CPU on every request.',
  });
}
