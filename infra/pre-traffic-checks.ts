import { Duration, Stack, Validations, type CfnElement, type RemovalPolicy } from 'aws-cdk-lib';
import type { LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { PolicyStatement, Role, ServicePrincipal, type IRole } from 'aws-cdk-lib/aws-iam';
import type { Alias, IFunction } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { preTrafficHookTimeoutMs } from '../functions/pre-traffic-hook/hook-time-budget';

import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { FUNCTION_CATALOG } from '../shared/catalog/function-catalog';
import { ENV } from '../shared/facts/environment';
import { environmentOf, functionDefaults, type LogLevel } from './api-function';
import type { ApiKeysTable } from './tables';
import { refuseInvalidConfig } from './config-refusal';
import { API_FUNCTIONS, type ApiFunctionName } from '../shared/facts/function-names';

/** A deployment group the hook gates, with the alias whose updates start its deployments. */
export interface GatedDeployment {
  readonly group: LambdaDeploymentGroup;
  readonly alias: Alias;
}

export interface PreTrafficChecksProps {
  /** Every function whose new versions the hook checks, by the name its checks know it by (functions/pre-traffic-hook/pre-traffic-expectations.ts). */
  readonly functions: ReadonlyMap<ApiFunctionName, IFunction>;
  /** What the hook starts, asynchronously, for each function whose new version passed: the deployment's own traffic. */
  readonly deploymentTraffic: IFunction;
  /** The API keys table the authorizer reads, where the hook issues and revokes its check key. */
  readonly apiKeysTable: ApiKeysTable;
  /** Memory of the hook, in MB. */
  readonly memoryMiB: number;
  /** Application log level of the hook. */
  readonly logLevel: LogLevel;
  /** Retention of the hook's log group. */
  readonly logRetention: RetentionDays;
  /** What happens to the log group when it leaves the stack. */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * CodeDeploy's BeforeAllowTraffic hook for every function of the stage (docs/operations.md, "Pre-traffic
 * checks"). One hook serves every deployment group, since each deployment says which function and version it moves.
 */
export class PreTrafficChecks extends Construct {
  /** The hook CodeDeploy invokes. */
  readonly function: NodejsFunction;
  readonly logGroup: LogGroup;
  /**
   * May write its own log, invoke the checked functions' published versions, put and revoke its check key
   * in the keys table, and read and report on deployments (on "*", the only resource those calls take).
   */
  readonly role: Role;

  constructor(scope: Construct, id: string, props: PreTrafficChecksProps) {
    super(scope, id);
    const missing = API_FUNCTIONS.filter((fn) => !props.functions.has(fn));
    if (missing.length > 0) throw new Error(`The pre-traffic hook has no function for ${missing.join(', ')}`);

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);

    const functionNames = Object.fromEntries([...props.functions].map(([name, fn]) => [name, fn.functionName]));
    const environment = environmentOf('preTrafficHook', {
      [ENV.logLevel]: props.logLevel,
      [ENV.preTrafficTargets]: Stack.of(this).toJsonString(functionNames),
      [ENV.apiKeysTable]: props.apiKeysTable.table.tableName,
      [ENV.deploymentTrafficFunction]: props.deploymentTraffic.functionName,
    });
    this.function = new NodejsFunction(this, 'Function', {
      ...functionDefaults('preTrafficHook', props.logLevel),
      memorySize: props.memoryMiB,
      timeout: Duration.millis(preTrafficHookTimeoutMs()),
      role: this.role,
      logGroup: this.logGroup,
      environment,
    });
    refuseInvalidConfig(this.function, FUNCTION_CONFIG.preTrafficHook, environment);

    // `:*` is every qualified name of the function, and a published version is known only once
    // CloudFormation has published it; the unqualified name (the latest code) is not among them.
    const versions = [...props.functions.values()].map((fn) => `${fn.functionArn}:*`);
    this.role.addToPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: versions }));
    // Its traffic runs start by the function's own name, unqualified: no version of it is ever asked for.
    this.role.addToPolicy(new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.deploymentTraffic.functionArn] }));
    props.apiKeysTable.grant(this.role, FUNCTION_CATALOG.preTrafficHook.tables.apiKeys);
    const validations = Validations.of(this.role);
    for (const fn of props.functions.values()) {
      validations.acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(fn)}.Arn>:*]`,
        reason:
          'The hook invokes the version a deployment is about to promote, which CloudFormation publishes during that ' +
          "deployment: only the function's qualified names can cover it, never another function or its unqualified latest code.",
      });
    }
    const hook = Validations.of(this.function);
    hook.acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'Only CodeDeploy invokes it. It reports Failed itself on any error; should even the report fail, CodeDeploy fails ' +
        'the deployment when no report comes, and a queued event could not be replayed into a deployment that has ended.',
    });
    hook.acknowledge({
      id: 'Serverless-LambdaTracing',
      reason:
        'Its log has a line per check with the version, the answer and the verdict, and the checked functions log each ' +
        'request under its check id; a trace would add a wildcard X-Ray grant to show the same calls.',
    });
  }

  /**
   * Makes the hook the BeforeAllowTraffic hook of each deployment group, allowed to read those groups'
   * deployments. Each alias depends on it, since an alias update starts a deployment that needs the hook ready.
   */
  gate(deployments: Iterable<GatedDeployment>): void {
    const gated = [...deployments];
    const roles = new Set<IRole>();
    for (const { group, alias } of gated) {
      group.addPreHook(this.function);
      roles.add(group.role);
      alias.node.addDependency(this, group.role);
    }
    // The Service Authorization Reference (CodeDeploy) lists no resource type for these three, so only "*"
    // grants them; CDK's own grant of the report, on each group, matches nothing.
    this.role.addToPolicy(
      new PolicyStatement({
        actions: ['codedeploy:ListDeploymentTargets', 'codedeploy:GetDeploymentTarget', 'codedeploy:PutLifecycleEventHookExecutionStatus'],
        resources: ['*'],
      }),
    );
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'ListDeploymentTargets, GetDeploymentTarget and PutLifecycleEventHookExecutionStatus take no resource type in the ' +
        'Service Authorization Reference, so only "*" grants them; the hook reads and reports on the one deployment whose id CodeDeploy hands it.',
    });
    for (const role of roles) {
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM5[Resource::<${logicalIdOf(this.function)}.Arn>:*]`,
        reason:
          "CDK's grant for a deployment hook: CodeDeploy invokes the hook by its name; the wildcard covers only the hook's " +
          'own qualified names, never another function.',
      });
    }
  }
}

function logicalIdOf(fn: IFunction): string {
  return Stack.of(fn).getLogicalId(fn.node.defaultChild as CfnElement);
}
