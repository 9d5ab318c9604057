import { ENV } from '../shared/facts/environment';
import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { createSecretsClient, secretApiKeyReader } from './synthetic-probe/probe-api-key';
import { createProbeHandler } from './synthetic-probe/probe-run';

/** The synthetic probe's Lambda entry point (infra/scheduled-probe.ts): configuration read once, at cold start. */

const config = readConfig(FUNCTION_CONFIG.syntheticProbe);

export const handler = createProbeHandler({
  baseUrl: config[ENV.probeBaseUrl],
  readApiKey: secretApiKeyReader(createSecretsClient(), config[ENV.probeApiKeySecret]),
});
