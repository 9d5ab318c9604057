import { join } from 'node:path';
import type { CfnElement } from 'aws-cdk-lib';
import type { TableNames } from '../../local/dynamodb-local';
import type { Synthesis, SynthesizedStage } from './synth';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** One function as `cdk deploy` would upload and configure it. */
export interface FunctionAsset {
  readonly name: ApiFunctionName;
  /** The asset directory: index.js and its source map, exactly what would be uploaded. */
  readonly taskRoot: string;
  readonly memoryMiB: number;
  readonly timeoutMs: number;
  /** Lambda's environment for the function, with the template's references resolved to the local resources. */
  environment(local: LocalResources): Record<string, string>;
}

export interface LocalResources {
  readonly tables: TableNames;
  readonly dynamoDbEndpoint: string;
  /** Stands in for the secret the template resolves from Secrets Manager. */
  readonly cursorSecret: string;
}

/** The function of every handler of a synthesized stage. */
export function functionAssets(synthesis: Pick<Synthesis, 'outdir'>, stage: SynthesizedStage): ReadonlyMap<ApiFunctionName, FunctionAsset> {
  const { stack } = stage;
  const logicalId = (element: unknown) => stack.getLogicalId(element as CfnElement);
  return new Map(
    [...stack.functions.byName].map(([name, target]) => {
      const resource = stage.json.Resources[logicalId(target.function.node.defaultChild)]!;
      const { Environment, MemorySize, Timeout } = resource.Properties!;
      const taskRoot = join(synthesis.outdir, resource.Metadata!['aws:asset:path']);
      const environment = (local: LocalResources): Record<string, string> => {
        const ownPets = stack.petsTable.stackTable;
        const references: Record<string, string> = {
          ...(ownPets === undefined ? {} : { [logicalId(ownPets.node.defaultChild)]: local.tables.pets }),
          [logicalId(stack.apiKeysTable.table.node.defaultChild)]: local.tables.apiKeys,
          [logicalId(stack.idempotencyTable.table.node.defaultChild)]: local.tables.idempotency,
        };
        // A restored pets table is named, not referenced (infra/stages.ts, restoredPetsTable): locally it is the pets table.
        const restoredPets = stage.config.restoredPetsTable?.tableName;
        const resolve = (variable: string, value: unknown): string => {
          if (typeof value === 'string') return value === restoredPets ? local.tables.pets : value;
          const json = JSON.stringify(value);
          if (json.includes('{{resolve:secretsmanager:')) return local.cursorSecret;
          const ref = (value as { Ref?: string }).Ref;
          if (ref !== undefined && references[ref] !== undefined) return references[ref];
          throw new Error(`Cannot resolve ${variable}=${json} of ${name}: teach tools/lambda/function-assets.ts the new variable.`);
        };
        return {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          LANG: 'en_US.UTF-8',
          TZ: ':UTC',
          LAMBDA_TASK_ROOT: taskRoot,
          AWS_LAMBDA_FUNCTION_NAME: `${stage.config.stackName}-${target.node.id}`,
          AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(MemorySize),
          AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
          AWS_REGION: 'us-east-1',
          AWS_DEFAULT_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          AWS_ENDPOINT_URL_DYNAMODB: local.dynamoDbEndpoint,
          FUNCTION_TIMEOUT_MS: String(Timeout * 1000),
          ...Object.fromEntries(Object.entries(Environment.Variables).map(([variable, value]) => [variable, resolve(variable, value)])),
        };
      };
      return [name, { name, taskRoot, memoryMiB: MemorySize, timeoutMs: Timeout * 1000, environment }] as const;
    }),
  );
}
