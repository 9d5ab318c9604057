import { CodeDeployClient, GetDeploymentCommand, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'aws-lambda';
import { generateApiKey } from '../shared/domain/auth/api-keys';
import { petIdFor, randomCreationToken } from '../shared/domain/pets/pet-operations';
import { ENV } from '../shared/facts/environment';
import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { logger } from '../shared/runtime/logger';
import { runDeploymentTraffic, type DeploymentApi, type TrafficLambdaApi } from './deployment-traffic/traffic-run';

/**
 * The Lambda entry point of the deployment traffic (infra/traffic-during-deployment.ts): wiring only. The pre-traffic
 * hook starts a run per function whose new version passed its checks; CodeDeploy invokes it to bake.
 */

const config = readConfig(FUNCTION_CONFIG.deploymentTraffic);

const codeDeployClient = new CodeDeployClient({});
const lambdaClient = new LambdaClient({});
const codeDeploy: DeploymentApi = {
  getDeployment: (input, options) => codeDeployClient.send(new GetDeploymentCommand(input), options),
  putLifecycleEventHookExecutionStatus: (input, options) =>
    codeDeployClient.send(new PutLifecycleEventHookExecutionStatusCommand(input), options),
};
const lambda: TrafficLambdaApi = { invoke: (input, options) => lambdaClient.send(new InvokeCommand(input), options) };

export const handler = (event: unknown, context: Context): Promise<void> =>
  logger.runInvocation(() => {
    logger.addContext(context);
    return runDeploymentTraffic(event, {
      codeDeploy,
      lambda,
      functionNames: config[ENV.preTrafficTargets],
      clock: context,
      wait: (ms) => sleep(ms),
      now: Date.now,
      unknownApiKey: generateApiKey(),
      unknownPetId: petIdFor(randomCreationToken(), 0),
    });
  });
