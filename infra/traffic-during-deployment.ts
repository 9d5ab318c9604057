import { Duration, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import type { LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { BAKE_MINUTES, CANARY_MINUTES, LAMBDA_MAX_TIMEOUT_MS } from '../shared/facts/deployment';
import { ENV } from '../shared/facts/environment';
import { API_FUNCTIONS, type ApiFunctionName } from '../shared/facts/function-names';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { environmentOf, functionDefaults, LIVE_ALIAS_NAME, type LogLevel } from './api-function';
import { refuseInvalidConfig } from './config-refusal';

export interface DeploymentTrafficProps {
  /** The `live` alias of every function behind the API, by its name: the only things the traffic invokes. */
  readonly aliases: ReadonlyMap<ApiFunctionName, Alias>;
  /** Memory of the function, in MB. */
  readonly memoryMiB: number;
  /** Application log level of the function. */
  readonly logLevel: LogLevel;
  /** Namespace of the stage's business metrics, where it counts the authorizer's judged answers it sees. */
  readonly metricsNamespace: string;
  /** Retention of its log group. */
  readonly logRetention: RetentionDays;
  /** What happens to the log group when it leaves the stack. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The deployment's own requests and its bake (functions/deployment-traffic/): while a function's deployment
 * lasts, its `live` alias gets a steady trickle of reads and refused creates, so its new version is judged on
 * traffic even when no client calls; after the shift, the same function is the AfterAllowTraffic hook that
 * holds the deployment open BAKE_MINUTES.
 */
export class DeploymentTraffic extends Construct {
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /** May write its own log, invoke the `live` aliases, and read and report on its stage's deployments. */
  readonly role: Role;

  constructor(scope: Construct, id: string, props: DeploymentTrafficProps) {
    super(scope, id);
    const missing = API_FUNCTIONS.filter((fn) => !props.aliases.has(fn));
    if (missing.length > 0) throw new Error(`The deployment traffic has no alias for ${missing.join(', ')}`);
    // One run spans the hook's checks, the canary and the bake, within Lambda's longest timeout.
    if ((CANARY_MINUTES + BAKE_MINUTES + 2) * 60_000 > LAMBDA_MAX_TIMEOUT_MS)
      throw new Error(`A canary of ${CANARY_MINUTES} and a bake of ${BAKE_MINUTES} minutes outlast one traffic run`);

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);

    const functionNames = Object.fromEntries([...props.aliases].map(([name, alias]) => [name, alias.version.lambda.functionName]));
    const environment = environmentOf('deploymentTraffic', {
      [ENV.logLevel]: props.logLevel,
      [ENV.metricsNamespace]: props.metricsNamespace,
      [ENV.preTrafficTargets]: Stack.of(this).toJsonString(functionNames),
    });
    this.function = new NodejsFunction(this, 'Function', {
      ...functionDefaults('deploymentTraffic', props.logLevel),
      memorySize: props.memoryMiB,
      timeout: Duration.millis(LAMBDA_MAX_TIMEOUT_MS),
      role: this.role,
      logGroup: this.logGroup,
      environment,
    });
    refuseInvalidConfig(this.function, FUNCTION_CONFIG.deploymentTraffic, environment);
    // Each alias by its function's ARN, not the alias resource: the aliases wait on CodeDeploy's role, whose
    // grant to invoke this hook waits on this function, so a reference to them would close a circle.
    const liveAliases = [...props.aliases.values()].map((alias) => `${alias.version.lambda.functionArn}:${LIVE_ALIAS_NAME}`);
    this.role.addToPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: liveAliases }));

    const validations = Validations.of(this.function);
    validations.acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'The pre-traffic hook and CodeDeploy invoke it. A lost traffic run leaves the real traffic judged as before; a bake that ' +
        'fails to report fails its deployment, which CodeDeploy rolls back: a queued event could not be replayed into a deployment that has ended.',
    });
    validations.acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: 'Its log ends each run with every answer counted by the version that gave it; a trace would show the same invocations.',
    });
  }

  /**
   * Makes the function the AfterAllowTraffic hook of each deployment group, allowed to read those groups'
   * deployments; the pre-traffic hook starts its traffic runs.
   */
  bake(groups: Iterable<LambdaDeploymentGroup>): void {
    const baked = [...groups];
    for (const group of baked) group.addPostHook(this.function);
    this.role.addToPolicy(
      new PolicyStatement({ actions: ['codedeploy:GetDeployment'], resources: baked.map((group) => group.deploymentGroupArn) }),
    );
    // The Service Authorization Reference (CodeDeploy) lists no resource type for it, so only "*" grants it.
    this.role.addToPolicy(new PolicyStatement({ actions: ['codedeploy:PutLifecycleEventHookExecutionStatus'], resources: ['*'] }));
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'PutLifecycleEventHookExecutionStatus takes no resource type in the Service Authorization Reference, so only "*" ' +
        'grants it; the function reports on the one deployment whose id CodeDeploy hands it.',
    });
    for (const role of new Set(baked.map((group) => group.role))) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(this.function.node.defaultChild as never)}.Arn>:*]`,
        reason:
          "CDK's grant for a deployment hook: CodeDeploy invokes the hook by its name; the wildcard covers only the hook's " +
          'own qualified names, never another function.',
      });
    }
  }
}
