import { CloudFormationClient, DescribeStacksCommand, paginateListStackResources, type Stack } from '@aws-sdk/client-cloudformation';
import { stages, type StageConfig } from '../infra/stages';

/** What the operator tools need of a deployed stage, read from its stack's outputs. */
export interface DeployedStage {
  readonly stage: StageConfig;
  /** The stage's region (infra/stages.ts), where its stack and tables live. */
  readonly region: string;
  /** Stack output values by key: BaseUrl, ApiKeysTableName, PetsTableName… (infra/animal-store-stack.ts). */
  readonly outputs: Readonly<Record<string, string>>;
}

/** A refusal an operator can act on: the message says what to do. */
export class StageLookupError extends Error {}

/** The stage named `name` in infra/stages.ts, or a StageLookupError listing the known ones. */
export function findStage(name: string): StageConfig {
  const stage = stages.find((candidate) => candidate.name === name);
  if (!stage)
    throw new StageLookupError(`Unknown stage "${name}": the stages are ${stages.map((s) => s.name).join(', ')} (infra/stages.ts).`);
  return stage;
}

/**
 * Finds a deployed stage with the caller's AWS credentials, only in the stage's own account, so credentials
 * for another never manage the wrong stage. `policyOutput` names the operator policy a refusal should attach.
 */
export async function findDeployedStage(name: string, policyOutput?: string): Promise<DeployedStage> {
  const stage = findStage(name);
  const client = new CloudFormationClient({ region: stage.region, maxAttempts: 2 });
  let stack: Stack | undefined;
  try {
    stack = (await client.send(new DescribeStacksCommand({ StackName: stage.stackName }))).Stacks?.[0];
  } catch (error) {
    throw new StageLookupError(describeFailure(stage, error, policyOutput));
  } finally {
    client.destroy();
  }
  if (!stack) throw new StageLookupError(notFound(stage));
  const account = stack.StackId?.split(':')[4];
  if (account !== stage.account) {
    throw new StageLookupError(
      `Stack ${stage.stackName} was found in account ${account}, but the ${stage.name} stage lives in account ${stage.account} ` +
        '(infra/stages.ts). Use credentials for that account.',
    );
  }
  const outputs = Object.fromEntries(
    (stack.Outputs ?? []).flatMap((output) => (output.OutputKey && output.OutputValue ? [[output.OutputKey, output.OutputValue]] : [])),
  );
  return { stage, region: stage.region, outputs };
}

/** One stack output, or a StageLookupError saying the stack predates it. */
export function requireOutput(deployed: DeployedStage, key: string): string {
  const value = deployed.outputs[key];
  if (value === undefined) {
    throw new StageLookupError(`Stack ${deployed.stage.stackName} has no output ${key}: deploy the current version of the stack first.`);
  }
  return value;
}

function notFound(stage: StageConfig): string {
  return (
    `No stack ${stage.stackName} in ${stage.region} for these credentials. The ${stage.name} stage lives in account ` +
    `${stage.account} (infra/stages.ts): use credentials for that account (AWS_PROFILE), and deploy the stage first.`
  );
}

function describeFailure(stage: StageConfig, error: unknown, policyOutput: string | undefined): string {
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'ValidationError' && /does not exist/.test(message)) return notFound(stage);
  if (name === 'CredentialsProviderError' || /credential/i.test(message)) {
    return `No AWS credentials: set AWS_PROFILE (or the AWS_ACCESS_KEY_ID family) for account ${stage.account}, where the ${stage.name} stage lives.`;
  }
  if (name === 'AccessDenied' || name === 'AccessDeniedException' || /not authorized/i.test(message)) {
    const remedy =
      policyOutput === undefined
        ? 'they need cloudformation:DescribeStacks on it'
        : `attach the stack's ${policyOutput} output policy to your role or group`;
    return `These credentials may not read stack ${stage.stackName}: ${remedy}. (${message})`;
  }
  return `Could not read stack ${stage.stackName} in ${stage.region}: ${message}`;
}

/** One resource of a deployed stage's stack. */
export interface StackResource {
  /** Its id in the template, e.g. MonitoringApiServerErrorRate2E5E1C62. */
  readonly logicalId: string;
  /** Its own name or id in its service: an alarm's name, a table's name. */
  readonly physicalId: string;
}

/**
 * The resources of one type (e.g. AWS::CloudWatch::Alarm) the stage's stack holds now, in template
 * order. Needs cloudformation:ListStackResources on the stack.
 */
export async function listStackResources(deployed: DeployedStage, resourceType: string): Promise<StackResource[]> {
  const { stage } = deployed;
  const client = new CloudFormationClient({ region: deployed.region, maxAttempts: 2 });
  const resources: StackResource[] = [];
  try {
    for await (const page of paginateListStackResources({ client }, { StackName: stage.stackName })) {
      for (const summary of page.StackResourceSummaries ?? []) {
        if (summary.ResourceType === resourceType && summary.PhysicalResourceId && summary.LogicalResourceId) {
          resources.push({ logicalId: summary.LogicalResourceId, physicalId: summary.PhysicalResourceId });
        }
      }
    }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new StageLookupError(`Could not list the resources of stack ${stage.stackName} (cloudformation:ListStackResources): ${message}`);
  } finally {
    client.destroy();
  }
  return resources;
}
