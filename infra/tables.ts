import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import { AttributeType, ProjectionType, TableV2, type ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { API_KEYS_TABLE } from '../shared/dynamodb/api-keys-table';
import { IDEMPOTENCY_TABLE } from '../shared/dynamodb/idempotency-table';
import { PETS_TABLE } from '../shared/dynamodb/pets-table';
import type { TableAction, TableName } from '../shared/catalog/function-catalog';

export interface DataTableProps {
  /** What happens to the table when it leaves the stack. */
  readonly removalPolicy: RemovalPolicy;
  /** Refuses DeleteTable, even from CloudFormation. */
  readonly deletionProtection: boolean;
}

/**
 * Settings every table of the store gets. On-demand billing, since the API's throttling bounds the
 * traffic; point-in-time recovery on every stage, so a production restore can be rehearsed on staging.
 */
function tableDefaults(props: DataTableProps) {
  return {
    removalPolicy: props.removalPolicy,
    deletionProtection: props.deletionProtection,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
  };
}

/**
 * A pets table restored outside the stack, which everything then uses by name in place of the stack's
 * own (docs/operations.md, "Restoring the pets table").
 */
export interface RestoredPetsTable {
  /** The restored table's name, as given to `aws dynamodb restore-table-to-point-in-time --target-table-name`. */
  readonly tableName: string;
  /**
   * Leaves the stack's own pets table out of the template so `cdk import` can adopt the restored one under
   * its logical id: kept where the stage keeps its data (production), deleted where it is DESTROY (staging).
   */
  readonly detachStackTable?: boolean;
}

export interface PetsTableProps extends DataTableProps {
  /** A restored table the functions use instead of the stack's own, by name; none outside a restore. */
  readonly restored?: RestoredPetsTable;
}

/** DynamoDB's rule for table names. */
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;

/**
 * The pets, keyed as shared/dynamodb/pets-table.ts says; its name is generated so stages can share an
 * account. During a restore, `table` is the restored table and the stack's own stays (or is detached).
 */
export class PetsTable extends Construct {
  /** The table's indexes, both read by listings only. */
  readonly indexNames: readonly string[];
  /** The stack's own table, under its pinned logical id; undefined while a restore detaches it. */
  readonly stackTable: TableV2 | undefined;
  /** The table in use, the stack's own or the restored one: every grant, alarm, graph and output follows it. */
  readonly table: ITableV2;

  constructor(scope: Construct, id: string, props: PetsTableProps) {
    super(scope, id);
    const { restored } = props;
    if (restored) this.refuseRestoredName(restored.tableName);
    const indexes = [PETS_TABLE.allPetsIndex, PETS_TABLE.byStatusIndex];
    this.indexNames = indexes.map((index) => index.name);
    this.stackTable = restored?.detachStackTable
      ? undefined
      : new TableV2(this, 'Table', {
          ...tableDefaults(props),
          partitionKey: { name: PETS_TABLE.partitionKey, type: AttributeType.NUMBER },
          globalSecondaryIndexes: indexes.map((index) => ({
            indexName: index.name,
            partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
            sortKey: { name: index.sortKey, type: AttributeType.STRING },
            projectionType: ProjectionType.ALL,
          })),
        });
    // By name, in the stack's own account and region: where restore-table-to-point-in-time puts it.
    this.table = restored ? TableV2.fromTableName(this, 'Restored', restored.tableName) : this.stackTable!;
  }

  /** Grants exactly these actions on the table in use, and nothing else. */
  grant(grantee: IGrantable, actions: readonly TableAction[]): void {
    grantActions(grantee, this.table, this.indexNames, actions);
  }

  /** Fails synthesis on a name DynamoDB would refuse, or one that would point the functions back at the stack's own table. */
  private refuseRestoredName(tableName: string): void {
    const problem = tableName.startsWith('arn:')
      ? 'is an ARN: give the table name alone (the stack adds its own account and region)'
      : !TABLE_NAME.test(tableName)
        ? "is not a DynamoDB table name: 3 to 255 letters, digits, '_', '-' or '.'"
        : tableName.startsWith(`${Stack.of(this).stackName}-${this.node.id}Table`)
          ? "is the name CloudFormation generated for the stack's own pets table: restore to a new name and give that"
          : undefined;
    if (problem) {
      throw new Error(
        `restoredPetsTable.tableName ${JSON.stringify(tableName)} of ${this.node.path} ${problem} (docs/operations.md, "Restoring the pets table").`,
      );
    }
  }
}

/**
 * The API keys, keyed as shared/dynamodb/api-keys-table.ts says. Only the authorizer reads it at run
 * time; ops write it with `npm run keys` under their own credentials.
 */
export class ApiKeysTable extends Construct {
  /** The index of the key design: revocation finds a key by its public id. */
  static readonly indexNames: readonly string[] = [API_KEYS_TABLE.byKeyIdIndex.name];
  readonly table: TableV2;

  constructor(scope: Construct, id: string, props: DataTableProps) {
    super(scope, id);
    const { byKeyIdIndex } = API_KEYS_TABLE;
    this.table = new TableV2(this, 'Table', {
      ...tableDefaults(props),
      partitionKey: { name: API_KEYS_TABLE.partitionKey, type: AttributeType.STRING },
      globalSecondaryIndexes: [
        {
          indexName: byKeyIdIndex.name,
          partitionKey: { name: byKeyIdIndex.partitionKey, type: AttributeType.STRING },
          projectionType: ProjectionType.KEYS_ONLY,
        },
      ],
    });
  }

  /** Grants exactly these actions on the table, and nothing else. */
  grant(grantee: IGrantable, actions: readonly TableAction[]): void {
    grantActions(grantee, this.table, ApiKeysTable.indexNames, actions);
  }

  /** What `npm run keys` does to the table; never deletes, so a revoked key stays on record. */
  keyAdministrationStatements(): PolicyStatement[] {
    const { tableArn } = this.table;
    return [
      new PolicyStatement({ actions: ['dynamodb:PutItem', 'dynamodb:Scan', 'dynamodb:UpdateItem'], resources: [tableArn] }),
      new PolicyStatement({ actions: ['dynamodb:Query'], resources: [`${tableArn}/index/${API_KEYS_TABLE.byKeyIdIndex.name}`] }),
    ];
  }
}

/**
 * Records of Idempotency-Key requests (docs/idempotency.md), deleted by TTL. No point-in-time recovery or
 * retention: losing them loses only replay markers, since the pets table keeps a retried create from doubling.
 */
export class IdempotencyTable extends Construct {
  readonly table: TableV2;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: IDEMPOTENCY_TABLE.partitionKey, type: AttributeType.STRING },
      timeToLiveAttribute: IDEMPOTENCY_TABLE.expiryAttribute,
      removalPolicy: RemovalPolicy.DESTROY,
      deletionProtection: false,
    });
  }

  /** Grants exactly these actions on the table, and nothing else. */
  grant(grantee: IGrantable, actions: readonly TableAction[]): void {
    grantActions(grantee, this.table, [], actions);
  }
}

/** A table construct of the stage, which grants a function the actions its catalog entry states. */
export interface GrantingTable {
  grant(grantee: IGrantable, actions: readonly TableAction[]): void;
}

/** Grants a function the table actions of its catalog entry (shared/catalog/function-catalog.ts), table by table. */
export function grantTables(
  grantee: IGrantable,
  access: { readonly [TTable in TableName]?: readonly TableAction[] },
  tables: Readonly<Record<TableName, GrantingTable>>,
): void {
  for (const [table, actions] of Object.entries(access) as Array<[TableName, readonly TableAction[]]>)
    tables[table].grant(grantee, actions);
}

/** The actions on the table's items in one statement, and Query on its indexes only: no function scans or queries the table itself. */
function grantActions(grantee: IGrantable, table: ITableV2, indexNames: readonly string[], actions: readonly TableAction[]): void {
  const onItems = actions.filter((action) => action !== 'Query');
  if (onItems.length > 0) {
    const statement = new PolicyStatement({ actions: onItems.map((action) => `dynamodb:${action}`), resources: [table.tableArn] });
    grantee.grantPrincipal.addToPrincipalPolicy(statement);
  }
  if (actions.includes('Query')) {
    const resources = indexNames.map((index) => `${table.tableArn}/index/${index}`);
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['dynamodb:Query'], resources }));
  }
}
