import { CfnOutput, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { ApiFunctions } from './api-functions';
import { CursorSecret } from './cursor-secret';
import { Monitoring } from './monitoring';
import { PetStoreApi } from './pet-store-api';
import type { StageConfig } from './stages';
import { ApiKeysTable, IdempotencyTable, PetsTable } from './tables';

export interface AnimalStoreStackProps extends StackProps {
  /** The stage this stack deploys; everything stage-specific comes from here. */
  readonly stage: StageConfig;
}

/** One complete, self-contained deployment of the animal store: nothing is shared with other stages. */
export class AnimalStoreStack extends Stack {
  /** The stage this stack deploys. */
  readonly config: StageConfig;
  readonly petsTable: PetsTable;
  readonly apiKeysTable: ApiKeysTable;
  readonly idempotencyTable: IdempotencyTable;
  readonly functions: ApiFunctions;
  readonly api: PetStoreApi;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: AnimalStoreStackProps) {
    super(scope, id, {
      description: `Animal store API, ${props.stage.name} stage`,
      stackName: props.stage.stackName,
      terminationProtection: props.stage.terminationProtection,
      ...props,
    });
    const { stage } = props;
    this.config = stage;
    Tags.of(this).add('application', 'animal-store');
    Tags.of(this).add('stage', stage.name);

    const data = { removalPolicy: stage.removalPolicy, deletionProtection: stage.deletionProtection };
    this.petsTable = new PetsTable(this, 'Pets', data);
    this.apiKeysTable = new ApiKeysTable(this, 'ApiKeys', data);
    this.idempotencyTable = new IdempotencyTable(this, 'Idempotency');
    const cursorSecret = new CursorSecret(this, 'CursorSecret', {
      removalPolicy: stage.removalPolicy,
      generation: stage.cursorSecretGeneration,
    });

    this.functions = new ApiFunctions(this, 'Functions', {
      petsTable: this.petsTable,
      apiKeysTable: this.apiKeysTable,
      idempotencyTable: this.idempotencyTable,
      cursorSecret,
      memoryMiB: stage.memoryMiB,
      logLevel: stage.logLevel,
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });

    this.api = new PetStoreApi(this, 'Api', {
      routeFunctions: new Map([...this.functions.routes].map(([handler, fn]) => [handler, fn.function])),
      fallbackFunction: this.functions.fallback.function,
      authorizerFunction: this.functions.authorizer.function,
      throttle: stage.throttle,
      cors: stage.cors,
      logRetention: stage.logRetention,
      removalPolicy: stage.removalPolicy,
    });

    this.monitoring = new Monitoring(this, 'Monitoring', {
      api: this.api.httpApi,
      functions: new Map(this.functions.all.map((fn) => [fn.node.id, fn.function])),
      tables: new Map([
        ['Pets', this.petsTable.table],
        ['ApiKeys', this.apiKeysTable.table],
        ['Idempotency', this.idempotencyTable.table],
      ]),
      thresholds: stage.alarms,
      ...(stage.alarmTopicArn === undefined ? {} : { alarmTopicArn: stage.alarmTopicArn }),
    });

    new CfnOutput(this, 'BaseUrl', { value: this.api.baseUrl, description: 'Base URL of the API; every path is under it.' });
    new CfnOutput(this, 'ApiKeysTableName', {
      value: this.apiKeysTable.table.tableName,
      description: 'The --table of `npm run keys` (create, list, revoke API keys).',
    });
    new CfnOutput(this, 'PetsTableName', { value: this.petsTable.table.tableName, description: 'The pets table.' });
    new CfnOutput(this, 'Region', { value: this.region, description: 'The --region of `npm run keys`.' });
    new CfnOutput(this, 'CursorSecretArn', {
      value: cursorSecret.secret.secretArn,
      description: 'Secret that signs pagination cursors; rotate it with cursorSecretGeneration in infra/stages.ts.',
    });
  }
}
