import { Validations, type RemovalPolicy } from 'aws-cdk-lib';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ENV } from '../shared/facts/environment';
import { writeShardsOf, type ListingConfig } from '../shared/facts/listing';
import { authorizer, routeNotFoundHandler, routes, type FunctionName, type Route } from '../shared/facts/routes';
import { ApiFunction } from './api-function';
import type { CursorSecret } from './cursor-secret';
import { PETS_TABLE_ACCESS } from './pets-table-access';
import type { LogLevel } from './api-function';
import type { ApiKeysTable, IdempotencyTable, PetsTable } from './tables';

export type { FunctionName } from '../shared/facts/routes';

export interface ApiFunctionsProps {
  readonly petsTable: PetsTable;
  readonly apiKeysTable: ApiKeysTable;
  /** Records of Idempotency-Key requests, for the routes that honour the header. */
  readonly idempotencyTable: IdempotencyTable;
  /** Signs the cursors of paginated listings. */
  readonly cursorSecret: CursorSecret;
  /** How listings' indexes are spread and read: the routes that write or list pets get it. */
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
 * Every function of the API, built from the route table; each gets the environment and the DynamoDB
 * access it needs, no more.
 */
export class ApiFunctions extends Construct {
  /** The function of each route, by handler name. */
  readonly routes: ReadonlyMap<string, ApiFunction>;
  /** Serves API Gateway's `$default` route: our 404/405. */
  readonly routeNotFound: ApiFunction;
  /** Verifies API keys in front of every route. */
  readonly authorizer: ApiFunction;

  constructor(scope: Construct, id: string, props: ApiFunctionsProps) {
    super(scope, id);
    const defaults = {
      logLevel: props.logLevel,
      metricsNamespace: props.metricsNamespace,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    };
    const pets = props.petsTable.table;
    const { listing } = props;
    if (writeShardsOf(listing) > listing.shards) {
      throw new Error(
        `listing.writeShards (${listing.writeShards}) of ${this.node.path} exceeds listing.shards (${listing.shards}): listings would miss the pets created in the shards they do not read.`,
      );
    }

    this.routes = new Map(
      routes.map((route) => {
        const { paginated, idempotent }: Route = route;
        const fn = new ApiFunction(this, route.operationId, {
          ...defaults,
          memoryMiB: props.memoryMiB[route.operationId],
          handler: route.handler,
          environment: {
            [ENV.petsTable]: pets.tableName,
            ...(PETS_TABLE_ACCESS[route.operationId].includes('put') ? { [ENV.writeShards]: String(writeShardsOf(listing)) } : {}),
            ...(paginated
              ? {
                  [ENV.listingShards]: String(listing.shards),
                  [ENV.cursorSecret]: props.cursorSecret.environmentValue(),
                  [ENV.listHeadCacheMs]: String(listing.headCacheMs),
                }
              : {}),
            ...(idempotent ? { [ENV.idempotencyTable]: props.idempotencyTable.table.tableName } : {}),
          },
        });
        props.petsTable.grantAccess(fn.role, PETS_TABLE_ACCESS[route.operationId]);
        if (idempotent) props.idempotencyTable.grantRecords(fn.role);
        return [route.handler, fn] as const;
      }),
    );

    this.routeNotFound = new ApiFunction(this, 'RouteNotFound', {
      ...defaults,
      memoryMiB: props.memoryMiB.routeNotFound,
      handler: routeNotFoundHandler,
    });

    this.authorizer = new ApiFunction(this, 'Authorizer', {
      ...defaults,
      memoryMiB: props.memoryMiB.authorizer,
      handler: authorizer.handler,
      // It fronts every route: were it throttled, every request would fail, not just some.
      ...(props.authorizerReservedConcurrency === undefined ? {} : { reservedConcurrency: props.authorizerReservedConcurrency }),
      environment: { [ENV.apiKeysTable]: props.apiKeysTable.table.tableName },
    });
    props.apiKeysTable.grantKeyLookup(this.authorizer.role);

    for (const fn of this.all) acknowledgeSynchronousInvocation(fn);
  }

  get all(): ApiFunction[] {
    return [...this.routes.values(), this.routeNotFound, this.authorizer];
  }

  /** Every function by its name: the operation's id, routeNotFound, the authorizer. */
  get byName(): ReadonlyMap<FunctionName, ApiFunction> {
    return new Map<FunctionName, ApiFunction>([
      ...routes.map((route): [FunctionName, ApiFunction] => [route.operationId, this.routes.get(route.handler)!]),
      ['routeNotFound', this.routeNotFound],
      ['authorizer', this.authorizer],
    ]);
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
