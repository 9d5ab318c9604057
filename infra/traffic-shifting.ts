import { Validations } from 'aws-cdk-lib';
import type { IAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaApplication, LambdaDeploymentGroup, type ILambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { Alias } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { ApiFunctionName } from '../shared/facts/function-names';

export interface TrafficShiftingProps {
  /** The `live` alias of each function, by the name its alarms use. */
  readonly aliases: ReadonlyMap<ApiFunctionName, Alias>;
  /** Canary, linear or all at once. */
  readonly deploymentConfig: ILambdaDeploymentConfig;
  /** The alarms that stop and roll back the deployment of one function: its new version's against its old one's. */
  readonly rollbackAlarmsFor: (functionName: ApiFunctionName) => readonly IAlarm[];
  /**
   * CodeDeploy polls none of those alarms: a deployment then goes through while one is in ALARM. For an
   * emergency release only; the groups keep their alarms, so the next release turns polling back on.
   */
  readonly ignoreAlarms: boolean;
}

/**
 * How a deploy reaches traffic: CodeDeploy moves each changed function's `live` alias to its new version
 * and back when a rollback alarm fires. One deployment group per function, so each moves on its own.
 */
export class TrafficShifting extends Construct {
  /** The deployment group of each function, by name. */
  readonly deploymentGroups: ReadonlyMap<ApiFunctionName, LambdaDeploymentGroup>;

  constructor(scope: Construct, id: string, props: TrafficShiftingProps) {
    super(scope, id);
    const application = new LambdaApplication(this, 'Application');
    // One role for every group: they all need the same thing.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "AWS's own least-privilege policy for CodeDeploy on Lambda, kept current by AWS: it reads alarms and the " +
        'functions, moves aliases, invokes only hook functions named CodeDeployHook_*, and publishes only to topics named CodeDeployTopic*.',
    });
    this.deploymentGroups = new Map(
      [...props.aliases].map(([name, alias]) => {
        const group = new LambdaDeploymentGroup(this, name, {
          application,
          alias,
          deploymentConfig: props.deploymentConfig,
          alarms: [...props.rollbackAlarmsFor(name)],
          ignoreAlarmConfiguration: props.ignoreAlarms,
          autoRollback: { failedDeployment: true, stoppedDeployment: true, deploymentInAlarm: true },
          role,
        });
        // An alias update starts the deployment, so the group's settings (canary or all at once, alarms
        // polled or not) must change first; said outright, not left to a reference in UpdatePolicy.
        alias.node.addDependency(group);
        return [name, group] as const;
      }),
    );
  }
}
