import { ENV } from '../facts/environment';
import { readConfig } from '../runtime/config';
import { SYNTHETIC_PROBE_CONFIG } from './checks-config';
import { createSecretsClient, secretApiKeyReader } from './probe-api-key';
import { createProbeHandler } from './synthetic-probe';

/** The synthetic probe's Lambda entry point (infra/synthetic-probe.ts): configuration read once, at cold start. */

const config = readConfig(SYNTHETIC_PROBE_CONFIG);

export const handler = createProbeHandler({
  baseUrl: config[ENV.probeBaseUrl],
  readApiKey: secretApiKeyReader(createSecretsClient(), config[ENV.probeApiKeySecret]),
});
