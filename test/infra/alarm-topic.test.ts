import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { Alarm, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, Key } from 'aws-cdk-lib/aws-kms';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { describe, expect, it } from 'vitest';
import { AlarmTopic } from '../../infra/alarm-topic';
import { findingsOf, permissionGraph, type PermissionGraph } from '../helpers/permission-graph';
import type { CfnTemplate } from '../../tools/lambda/synth';

const ACCOUNT = '123456789012';
const REGION = 'eu-west-1';

function bareStack(): Stack {
  return new Stack(new App(), 'Bare', { env: { account: ACCOUNT, region: REGION } });
}

/** An alarm of the stack that notifies `topic`, and the stack's permission graph. */
function graphWithAlarmOn(stack: Stack, topic: ITopic): PermissionGraph {
  const alarm = new Alarm(stack, 'Alarm', {
    metric: new Metric({ namespace: 'AWS/Lambda', metricName: 'Errors' }),
    threshold: 1,
    evaluationPeriods: 1,
  });
  alarm.addAlarmAction(new SnsAction(topic));
  const template = Template.fromStack(stack).toJSON() as CfnTemplate;
  return permissionGraph(template, { account: ACCOUNT, region: REGION, stackName: stack.stackName });
}

describe('the alarm topic', () => {
  it("can be notified by the stack's alarms: CloudWatch may publish, for alarms of this account only", () => {
    const stack = bareStack();
    const graph = graphWithAlarmOn(stack, new AlarmTopic(stack, 'Topic'));
    expect(graph.edges.map((edge) => edge.kind)).toEqual(['CloudWatch alarm → SNS topic']);
    expect(findingsOf(graph)).toEqual([]);
  });

  it('is what a topic with enforceSSL alone is not: one nothing lets CloudWatch publish to', () => {
    const stack = bareStack();
    const graph = graphWithAlarmOn(stack, new Topic(stack, 'Topic', { enforceSSL: true }));
    expect(findingsOf(graph)).toEqual([
      expect.stringMatching(/^CloudWatch alarm → SNS topic: Alarm.* the topic policy does not let cloudwatch\.amazonaws\.com publish/),
    ]);
  });

  it('still refuses publishing without TLS, whoever publishes', () => {
    const stack = bareStack();
    new AlarmTopic(stack, 'Topic');
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Principal: '*',
            Action: 'sns:Publish',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('lets CloudWatch use the key of an encrypted topic, for alarms of this account only', () => {
    const stack = bareStack();
    const graph = graphWithAlarmOn(stack, new AlarmTopic(stack, 'Topic', { masterKey: new Key(stack, 'Key') }));
    expect(findingsOf(graph)).toEqual([]);
    expect(graph.edges[0]!.grantedBy).toEqual(
      expect.arrayContaining([expect.stringMatching(/^topic policy/), expect.stringMatching(/^key policy/)]),
    );
  });

  it('cannot be notified when encrypted with a key whose policy does not admit CloudWatch', () => {
    const stack = bareStack();
    // A key of the stack, but given to a plain topic: nothing adds CloudWatch to the key's policy.
    const topic = new Topic(stack, 'Topic', { masterKey: new Key(stack, 'Key') });
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: { StringEquals: { 'aws:SourceAccount': ACCOUNT } },
      }),
    );
    const findings = findingsOf(graphWithAlarmOn(stack, topic));
    expect(findings).toEqual([
      expect.stringMatching(/the key policy does not let cloudwatch\.amazonaws\.com kms:Decrypt/),
      expect.stringMatching(/the key policy does not let cloudwatch\.amazonaws\.com kms:GenerateDataKey/),
    ]);
  });

  it('refuses a key whose policy this stack cannot change: an imported key, or the AWS managed key of SNS', () => {
    const stack = bareStack();
    const imported = Key.fromKeyArn(stack, 'Imported', `arn:aws:kms:${REGION}:${ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab`);
    expect(() => new AlarmTopic(stack, 'WithImportedKey', { masterKey: imported })).toThrow(/cannot be changed from this stack/);
    const awsManaged = Alias.fromAliasName(stack, 'AwsManaged', 'alias/aws/sns');
    expect(() => new AlarmTopic(stack, 'WithAwsManagedKey', { masterKey: awsManaged })).toThrow(/cannot be changed from this stack/);
  });
});
