import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IKey } from 'aws-cdk-lib/aws-kms';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

export interface AlarmTopicProps {
  /** Encrypts the topic with this key, whose policy then admits CloudWatch too; unencrypted when undefined. */
  readonly masterKey?: IKey;
}

/**
 * The SNS topic a stage's CloudWatch alarms notify. `enforceSSL` replaces SNS's default policy with a
 * lone Deny, so without the Allow below every alarm would silently fail to publish. The Allow is scoped
 * by account and region, not alarm name, since generated names have no promised shape.
 */
export class AlarmTopic extends Topic {
  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
    super(scope, id, {
      displayName: 'Animal store alarms',
      enforceSSL: true,
      ...(props.masterKey === undefined ? {} : { masterKey: props.masterKey }),
    });
    const cloudWatch = new ServicePrincipal('cloudwatch.amazonaws.com');
    const stack = Stack.of(this);
    const fromOurAlarms = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };
    this.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToPublish',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [this.topicArn],
        conditions: fromOurAlarms,
      }),
    );

    if (props.masterKey === undefined) {
      Validations.of(this).acknowledge({
        id: 'AwsSolutions-SNS2',
        reason:
          'Alarm notifications carry alarm names, metric values and thresholds, no customer data. Encrypting them would ' +
          'need a customer managed KMS key whose policy admits CloudWatch (the AWS managed SNS key does not), for nothing ' +
          'worth protecting; pass masterKey to have one.',
      });
      return;
    }
    // SNS encrypts what CloudWatch publishes with the key, as CloudWatch: without this, publishing fails as above.
    const { statementAdded } = props.masterKey.addToResourcePolicy(
      new PolicyStatement({
        sid: 'AllowCloudWatchAlarmsToUseTheKey',
        principals: [cloudWatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: fromOurAlarms,
      }),
    );
    if (!statementAdded) {
      throw new Error(
        `${this.node.path}: the policy of key ${props.masterKey.node.path} cannot be changed from this stack (an imported key or ` +
          'an AWS managed one), so CloudWatch could not publish to the topic. Pass a key this stack defines.',
      );
    }
  }
}
