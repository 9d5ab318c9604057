import { createServer, type Server } from 'node:http';
import { listenOnLoopback } from './fake-aws-server';

export interface FakeSecretsManager {
  /** Point the SDK here: `endpoint` of the client, or AWS_ENDPOINT_URL_SECRETS_MANAGER. */
  readonly endpoint: string;
  /** The secret string of each secret, by ARN: change it, and the next read sees the change. */
  readonly secrets: Map<string, string>;
  /** The SecretId of every GetSecretValue received, in order. */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * Just enough of Secrets Manager's JSON API (GetSecretValue) for the synthetic probe to read its key
 * without an AWS account. An unknown secret gets Secrets Manager's own error.
 */
export async function startFakeSecretsManager(secrets: Record<string, string> = {}): Promise<FakeSecretsManager> {
  const stored = new Map(Object.entries(secrets));
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const { SecretId = '' } = JSON.parse(body || '{}') as { SecretId?: string };
      requests.push(SecretId);
      res.setHeader('content-type', 'application/x-amz-json-1.1');
      const value = req.headers['x-amz-target'] === 'secretsmanager.GetSecretValue' ? stored.get(SecretId) : undefined;
      if (value === undefined) {
        res.statusCode = 400;
        res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }));
        return;
      }
      res.end(
        JSON.stringify({
          ARN: SecretId,
          Name: SecretId.split(':').at(-1),
          SecretString: value,
          VersionId: '00000000-0000-0000-0000-000000000000',
          VersionStages: ['AWSCURRENT'],
          CreatedDate: 1_764_000_000,
        }),
      );
    });
  });
  const { endpoint, close } = await listenOnLoopback(server);
  return {
    endpoint,
    secrets: stored,
    requests,
    close,
  };
}
