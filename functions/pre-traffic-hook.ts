import {
  CodeDeployClient,
  GetDeploymentTargetCommand,
  ListDeploymentTargetsCommand,
  PutLifecycleEventHookExecutionStatusCommand,
} from '@aws-sdk/client-codedeploy';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import type { Context } from 'aws-lambda';
import { generateApiKey } from '../shared/domain/auth/api-keys';
import { DynamoApiKeyStore } from '../shared/dynamodb/dynamo-api-key-store';
import { createDocumentClient } from '../shared/dynamodb/dynamodb-client';
import { petIdFor, randomCreationToken } from '../shared/domain/pets/pet-operations';
import { ENV } from '../shared/facts/environment';
import { readConfig } from '../shared/runtime/config';
import { logger } from '../shared/runtime/logger';
import { runPreTrafficChecks, type CodeDeployApi, type LambdaApi } from './pre-traffic-hook/pre-traffic-run';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';

/**
 * The Lambda entry point of CodeDeploy's BeforeAllowTraffic hook (infra/pre-traffic-checks.ts): wiring
 * only. The deployment says which function and versions it moves; the configuration which functions exist,
 * the keys table the authorizer's check keys are issued in, and the function that sends a passed canary its traffic.
 */

const config = readConfig(FUNCTION_CONFIG.preTrafficHook);

const codeDeployClient = new CodeDeployClient({});
const lambdaClient = new LambdaClient({});
const codeDeploy: CodeDeployApi = {
  listDeploymentTargets: (input, options) => codeDeployClient.send(new ListDeploymentTargetsCommand(input), options),
  getDeploymentTarget: (input, options) => codeDeployClient.send(new GetDeploymentTargetCommand(input), options),
  putLifecycleEventHookExecutionStatus: (input, options) =>
    codeDeployClient.send(new PutLifecycleEventHookExecutionStatusCommand(input), options),
};
const lambda: LambdaApi = { invoke: (input, options) => lambdaClient.send(new InvokeCommand(input), options) };
// The one store of the keys table, for the check keys the hook issues and revokes: no other table, no read.
const checkKeys = new DynamoApiKeyStore(createDocumentClient(), config[ENV.apiKeysTable]);

export const handler = (event: unknown, context: Context): Promise<void> => logger.runInvocation(() => checkNewVersion(event, context));

async function checkNewVersion(event: unknown, context: Context): Promise<void> {
  logger.addContext(context);
  await runPreTrafficChecks(event, {
    codeDeploy,
    lambda,
    functionNames: config[ENV.preTrafficTargets],
    trafficFunction: config[ENV.deploymentTrafficFunction],
    clock: context,
    checkKeys,
    checkContext: (runId) => ({
      runId,
      unknownApiKey: generateApiKey(),
      unknownPetId: petIdFor(randomCreationToken(), 0),
      now: new Date(),
    }),
  });
}
