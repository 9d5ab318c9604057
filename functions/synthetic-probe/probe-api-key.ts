import { GetSecretValueCommand, SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { PROBE_KEY_ATTEMPT_TIMEOUT_MS, PROBE_KEY_MAX_ATTEMPTS, PROBE_KEY_PLACEHOLDER } from '../../shared/facts/probe-settings';

/** Reads the probe's API key: undefined while none is configured; throws when the secret cannot be read. */
export type ApiKeyReader = () => Promise<string | undefined>;

/** A Secrets Manager client within the key's time budget (shared/facts/probe-settings.ts); where it points is Lambda's unless told. */
export function createSecretsClient(
  options: Pick<SecretsManagerClientConfig, 'endpoint' | 'region' | 'credentials'> = {},
): SecretsManagerClient {
  return new SecretsManagerClient({
    ...options,
    maxAttempts: PROBE_KEY_MAX_ATTEMPTS,
    requestHandler: new NodeHttpHandler({
      connectionTimeout: PROBE_KEY_ATTEMPT_TIMEOUT_MS,
      requestTimeout: PROBE_KEY_ATTEMPT_TIMEOUT_MS,
      throwOnRequestTimeout: true,
    }),
  });
}

/**
 * The probe's API key from its secret, read afresh on every run, so a key an operator stores or
 * rotates is used from the next run on. The stack creates the secret holding PROBE_KEY_PLACEHOLDER:
 * that, or nothing, means no key is configured yet.
 */
export function secretApiKeyReader(client: SecretsManagerClient, secretId: string): ApiKeyReader {
  return async () => {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    const value = SecretString?.trim() ?? '';
    return value === '' || value === PROBE_KEY_PLACEHOLDER ? undefined : value;
  };
}
