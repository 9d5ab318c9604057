import { ENV } from '../facts/environment';
import { readConfig, RequiredString } from '../runtime/config';
import { createSecretsClient, secretApiKeyReader } from './probe-api-key';
import { createProbeHandler } from './synthetic-probe';

/** The synthetic probe's Lambda entry point (infra/synthetic-probe.ts): configuration read once, at cold start. */

const config = readConfig({ [ENV.probeBaseUrl]: RequiredString, [ENV.probeApiKeySecret]: RequiredString });

export const handler = createProbeHandler({
  baseUrl: config[ENV.probeBaseUrl],
  readApiKey: secretApiKeyReader(createSecretsClient(), config[ENV.probeApiKeySecret]),
});
