import { CloudFormationClient, DescribeStacksCommand, paginateListStackResources, type Stack } from '@aws-sdk/client-cloudformation';
import { RELEASE_KIND_OUTPUT, WAY_BACK } from '../infra/release-kind';
import { stages, type StageConfig } from '../infra/stages';
import { messageOf } from '../shared/runtime/error-message';

/** What the operator tools need of a deployed stage, read from its stack's outputs. */
export interface DeployedStage {
  readonly stage: StageConfig;
  /** Stack output values by key: BaseUrl, ApiKeysTableName, PetsTableName… (infra/animal-store-stack.ts). */
  readonly outputs: Readonly<Record<string, string>>;
}

/** A refusal an operator can act on: the message says what to do. */
export class StageLookupError extends Error {}

/** Runs a command's lookup of its stage: a refusal exits 2 with its message, any other failure 1. */
export async function lookUpOrExit<T>(lookUp: () => Promise<T>): Promise<T> {
  try {
    return await lookUp();
  } catch (error) {
    process.stderr.write(`${messageOf(error)}\n`);
    process.exit(error instanceof StageLookupError ? 2 : 1);
  }
}

/** Only in the stage's own account, so other credentials never manage the wrong one; a refusal names the `policyOutput` policy. */
export async function findDeployedStage(name: string, policyOutput?: string): Promise<DeployedStage> {
  const stage = stages.find((candidate) => candidate.name === name);
  if (!stage)
    throw new StageLookupError(`Unknown stage "${name}": the stages are ${stages.map((s) => s.name).join(', ')} (infra/stages.ts).`);
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
  return { stage, outputs };
}

export function requireOutput(deployed: DeployedStage, key: string): string {
  const value = deployed.outputs[key];
  if (value === undefined) {
    throw new StageLookupError(`Stack ${deployed.stage.stackName} has no output ${key}: deploy the current version of the stack first.`);
  }
  return value;
}

/** A warning line when the stage runs an emergency release (its ReleaseKind output), for any tool that reads the stage; none otherwise. */
export function emergencyReleaseWarning(deployed: DeployedStage): string | undefined {
  if (deployed.outputs[RELEASE_KIND_OUTPUT] !== 'emergency') return undefined;
  return (
    `WARNING: the ${deployed.stage.name} stage runs an EMERGENCY release: every function moved at once and no alarm rolls ` +
    `a deployment back. Way back: ${WAY_BACK}.`
  );
}

function notFound(stage: StageConfig): string {
  return (
    `No stack ${stage.stackName} in ${stage.region} for these credentials. The ${stage.name} stage lives in account ` +
    `${stage.account} (infra/stages.ts): use credentials for that account (AWS_PROFILE), and deploy the stage first.`
  );
}

function describeFailure(stage: StageConfig, error: unknown, policyOutput: string | undefined): string {
  const name = error instanceof Error ? error.name : '';
  const message = messageOf(error);
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

/** The physical ids (an alarm's name, a table's name) of the stack's resources of one type, in template order. */
export async function listStackResources(deployed: DeployedStage, resourceType: string): Promise<string[]> {
  const { stage } = deployed;
  const client = new CloudFormationClient({ region: stage.region, maxAttempts: 2 });
  try {
    const pages = paginateListStackResources({ client }, { StackName: stage.stackName });
    const summaries = await collectPages(pages, (page) => page.StackResourceSummaries);
    return summaries.filter((summary) => summary.ResourceType === resourceType).flatMap((summary) => summary.PhysicalResourceId || []);
  } catch (error) {
    throw new StageLookupError(
      `Could not list the resources of stack ${stage.stackName} (cloudformation:ListStackResources): ${messageOf(error)}`,
    );
  } finally {
    client.destroy();
  }
}

/** Every item of every page an AWS SDK paginator yields. */
export async function collectPages<Page, Item>(pages: AsyncIterable<Page>, itemsOf: (page: Page) => Item[] | undefined): Promise<Item[]> {
  const items: Item[] = [];
  for await (const page of pages) items.push(...(itemsOf(page) ?? []));
  return items;
}
