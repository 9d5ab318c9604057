import { createServer, type Server } from 'node:http';
import { escapeXml, listenOnLoopback } from './fake-aws-server';

/** A stack as the fake answers DescribeStacks for it. */
export interface FakeStack {
  readonly stackName: string;
  readonly account: string;
  readonly region: string;
  readonly outputs: Readonly<Record<string, string>>;
  /** What ListStackResources answers for it. */
  readonly resources?: readonly FakeStackResource[];
  /** The caller may not read it: every request about it is refused as IAM refuses it. */
  readonly denied?: boolean;
}

/** One resource of a stack, as ListStackResources summarizes it. */
export interface FakeStackResource {
  readonly logicalId: string;
  /** E.g. AWS::CloudWatch::Alarm. */
  readonly type: string;
  /** The resource's own name or id: an alarm's name, a table's name. */
  readonly physicalId: string;
}

export interface FakeCloudFormation {
  /** Point the SDK here with AWS_ENDPOINT_URL_CLOUDFORMATION. */
  readonly endpoint: string;
  /** The requests received (DescribeStacks, ListStackResources), by stack name, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * Just enough of CloudFormation's query API (DescribeStacks and ListStackResources, XML answers) for the
 * operator tools to find a stage's outputs and resources without an AWS account. Unknown stacks get
 * CloudFormation's own error, denied ones IAM's.
 */
export async function startFakeCloudFormation(stacks: readonly FakeStack[]): Promise<FakeCloudFormation> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const params = new URLSearchParams(body);
      const name = params.get('StackName') ?? '';
      requests.push(name);
      const action = params.get('Action');
      const stack =
        action === 'DescribeStacks' || action === 'ListStackResources'
          ? stacks.find((candidate) => candidate.stackName === name)
          : undefined;
      res.setHeader('content-type', 'text/xml');
      if (!stack) {
        res.statusCode = 400;
        res.end(
          `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type>` +
            `<Code>ValidationError</Code><Message>Stack with id ${escapeXml(name)} does not exist</Message></Error>` +
            '<RequestId>fake</RequestId></ErrorResponse>',
        );
        return;
      }
      if (stack.denied) {
        res.statusCode = 403;
        res.end(
          `<ErrorResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><Error><Type>Sender</Type>` +
            `<Code>AccessDenied</Code><Message>User: arn:aws:iam::${stack.account}:user/operator is not authorized to perform: ` +
            `cloudformation:${action} on resource: ${escapeXml(stack.stackName)}</Message></Error>` +
            '<RequestId>fake</RequestId></ErrorResponse>',
        );
        return;
      }
      if (action === 'ListStackResources') {
        const resources = (stack.resources ?? [])
          .map(
            (resource) =>
              `<member><LogicalResourceId>${escapeXml(resource.logicalId)}</LogicalResourceId>` +
              `<PhysicalResourceId>${escapeXml(resource.physicalId)}</PhysicalResourceId><ResourceType>${escapeXml(resource.type)}</ResourceType>` +
              '<LastUpdatedTimestamp>2026-11-23T00:00:00Z</LastUpdatedTimestamp><ResourceStatus>CREATE_COMPLETE</ResourceStatus></member>',
          )
          .join('');
        res.end(
          '<ListStackResourcesResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><ListStackResourcesResult>' +
            `<StackResourceSummaries>${resources}</StackResourceSummaries></ListStackResourcesResult>` +
            '<ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></ListStackResourcesResponse>',
        );
        return;
      }
      const outputs = Object.entries(stack.outputs)
        .map(([key, value]) => `<member><OutputKey>${escapeXml(key)}</OutputKey><OutputValue>${escapeXml(value)}</OutputValue></member>`)
        .join('');
      res.end(
        '<DescribeStacksResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStacksResult><Stacks><member>' +
          `<StackId>arn:aws:cloudformation:${stack.region}:${stack.account}:stack/${escapeXml(stack.stackName)}/0b1e1e00-0000-0000-0000-000000000000</StackId>` +
          `<StackName>${escapeXml(stack.stackName)}</StackName><StackStatus>UPDATE_COMPLETE</StackStatus>` +
          `<CreationTime>2026-11-23T00:00:00Z</CreationTime><Outputs>${outputs}</Outputs>` +
          '</member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></DescribeStacksResponse>',
      );
    });
  });
  const { endpoint, close } = await listenOnLoopback(server);
  return {
    endpoint,
    requests,
    close,
  };
}
