import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { escapeXml, listenOnLoopback } from './fake-aws-server';

/** A subscription as SNS lists it: an e-mail one stays pending until its owner follows the confirmation link. */
export interface FakeSubscription {
  readonly protocol: string;
  readonly endpoint: string;
  readonly confirmed: boolean;
}

/** A topic as the fake holds it. */
export interface FakeTopic {
  readonly arn: string;
  readonly subscriptions: readonly FakeSubscription[];
  /** The caller may not list its subscriptions: every request about it is refused as IAM refuses it. */
  readonly denied?: boolean;
}

/** A ListSubscriptionsByTopic request the fake received. */
export interface ListSubscriptionsCall {
  readonly topicArn: string;
  readonly nextToken: string | undefined;
}

export interface FakeSns {
  /** Point the SDK here with AWS_ENDPOINT_URL_SNS. */
  readonly endpoint: string;
  readonly listSubscriptionsCalls: ListSubscriptionsCall[];
  close(): Promise<void>;
}

/**
 * Just enough of SNS's query API (ListSubscriptionsByTopic, XML answers) for the alarm drill to read its
 * topic's subscriptions without an AWS account. Pages hold `pageSize` subscriptions, as SNS's hold 100.
 */
export async function startFakeSns(topics: readonly FakeTopic[], { pageSize = 100 }: { pageSize?: number } = {}): Promise<FakeSns> {
  const listSubscriptionsCalls: ListSubscriptionsCall[] = [];
  // Fixed for the fake's life, as a confirmed subscription's ARN is.
  const arns = new Map(
    topics.flatMap((topic) => topic.subscriptions.map((subscription) => [subscription, `${topic.arn}:${randomUUID()}`])),
  );
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const params = new URLSearchParams(body);
      const topicArn = params.get('TopicArn') ?? '';
      const nextToken = params.get('NextToken') ?? undefined;
      res.setHeader('content-type', 'text/xml');
      if (params.get('Action') !== 'ListSubscriptionsByTopic') {
        res.statusCode = 400;
        res.end(error('InvalidAction', `The fake does not do ${params.get('Action')}`));
        return;
      }
      listSubscriptionsCalls.push({ topicArn, nextToken });
      const topic = topics.find((candidate) => candidate.arn === topicArn);
      if (!topic) {
        res.statusCode = 404;
        res.end(error('NotFound', 'Topic does not exist'));
        return;
      }
      if (topic.denied) {
        res.statusCode = 403;
        res.end(
          error(
            'AuthorizationError',
            `User: arn:aws:iam::${topicArn.split(':')[4]}:user/operator is not authorized to perform: SNS:ListSubscriptionsByTopic on resource: ${topicArn} because no identity-based policy allows the SNS:ListSubscriptionsByTopic action`,
          ),
        );
        return;
      }
      const start = Number(nextToken ?? 0);
      const page = topic.subscriptions.slice(start, start + pageSize);
      const members = page
        .map(
          (subscription) =>
            `<member><TopicArn>${escapeXml(topicArn)}</TopicArn><Protocol>${escapeXml(subscription.protocol)}</Protocol>` +
            `<SubscriptionArn>${subscription.confirmed ? escapeXml(arns.get(subscription) ?? '') : 'PendingConfirmation'}</SubscriptionArn>` +
            `<Owner>${topicArn.split(':')[4]}</Owner><Endpoint>${escapeXml(subscription.endpoint)}</Endpoint></member>`,
        )
        .join('');
      const more = start + pageSize < topic.subscriptions.length ? `<NextToken>${start + pageSize}</NextToken>` : '';
      res.end(
        '<ListSubscriptionsByTopicResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><ListSubscriptionsByTopicResult>' +
          `<Subscriptions>${members}</Subscriptions>${more}</ListSubscriptionsByTopicResult>` +
          '<ResponseMetadata><RequestId>fake</RequestId></ResponseMetadata></ListSubscriptionsByTopicResponse>',
      );
    });
  });
  const { endpoint, close } = await listenOnLoopback(server);
  return {
    endpoint,
    listSubscriptionsCalls,
    close,
  };
}

function error(code: string, message: string): string {
  return (
    `<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>${code}</Code>` +
    `<Message>${escapeXml(message)}</Message></Error><RequestId>fake</RequestId></ErrorResponse>`
  );
}
