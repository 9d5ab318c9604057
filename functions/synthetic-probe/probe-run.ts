import type { Context } from 'aws-lambda';
import type { Pet } from '../../shared/domain/pets/pet-schemas';
import { PROBE_STEP_TIMEOUT_MS } from '../../shared/facts/probe-settings';
import { logger as functionLogger, type Logger } from '../../shared/runtime/logger';
import { countProbeNotConfigured, recordProbeRun } from '../../shared/runtime/metrics';
import { unhandled } from '../../shared/runtime/unhandled';
import {
  invalidCreateIsRefused,
  listIsServed,
  petIsRead,
  runSteps,
  type CheckTarget,
  type Step,
  type StepResult,
} from '../../shared/checks/api-checks';
import type { ApiKeyReader } from './probe-api-key';

/**
 * The synthetic probe: on a schedule, calls the stage's public URL with its own API key, so the
 * alarms, all otherwise computed from traffic, hear of an outage when no client is calling. It writes
 * nothing, so it needs no permission on the tables (docs/operations.md, "Synthetic probe").
 */

/** Names the probe in the access log (`userAgent` animal-store-synthetic-probe). */
export const PROBE_AGENT = 'synthetic-probe';

/** How one run went. */
export type ProbeOutcome =
  /** No API key in the probe's secret yet: nothing was probed. */
  | { readonly status: 'not_configured' }
  /** The key could not be read: nothing was probed, and that is a failure. */
  | { readonly status: 'key_unreadable'; readonly reason: string }
  /** Every step ran; `passed` when every one passed. */
  | { readonly status: 'passed' | 'failed'; readonly latencyMs: number; readonly steps: readonly StepResult[] };

/** The steps of one run, in order: what a client of the stage does, minus writing. */
export function probeSteps(target: CheckTarget, timeoutMs: number): Step[] {
  let listed: readonly Pet[] | undefined;
  return [
    listIsServed(target, timeoutMs, (pets) => {
      listed = pets;
    }),
    petIsRead(target, timeoutMs, () => listed),
    invalidCreateIsRefused(target, timeoutMs),
  ];
}

export interface ProbeSettings {
  /** The stage's base URL, ending in BASE_PATH. */
  readonly baseUrl: string;
  /** The probe's API key, read at the start of every run. */
  readonly readApiKey: ApiKeyReader;
  /** Time budget of each step; PROBE_STEP_TIMEOUT_MS unless a test says otherwise. */
  readonly stepTimeoutMs?: number;
}

/** One run: read the key, run the steps, and say how it went. Logs and publishes nothing. */
export async function probeStage(settings: ProbeSettings): Promise<ProbeOutcome> {
  let apiKey: string | undefined;
  try {
    apiKey = await settings.readApiKey();
  } catch (error) {
    return { status: 'key_unreadable', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
  if (apiKey === undefined) return { status: 'not_configured' };
  const target: CheckTarget = { baseUrl: settings.baseUrl, apiKey, agent: PROBE_AGENT };
  const timeoutMs = settings.stepTimeoutMs ?? PROBE_STEP_TIMEOUT_MS;
  const steps = await runSteps(probeSteps(target, timeoutMs), timeoutMs);
  const latencyMs = steps.reduce((total, step) => total + step.ms, 0);
  return { status: steps.every((step) => step.passed) ? 'passed' : 'failed', latencyMs, steps };
}

export interface ProbeHandlerOptions extends ProbeSettings {
  /** Where the runs are logged; the functions' logger unless a test gives its own. */
  readonly logger?: Logger;
}

/**
 * The probe as a Lambda handler: each run is logged, published and returned. A failed probe is an
 * outcome, not an error, so only a crash or a timeout is a Lambda error, which the alarm sees as missing data.
 */
export function createProbeHandler(options: ProbeHandlerOptions) {
  const logger = options.logger ?? functionLogger;
  const probe = async (context: Pick<Context, 'functionName' | 'awsRequestId'>): Promise<ProbeOutcome> => {
    const startedAt = Date.now();
    logger.addContext(context);
    logger.appendKeys({ baseUrl: options.baseUrl });
    const outcome = await probeStage(options);
    const requestId = context.awsRequestId;
    switch (outcome.status) {
      case 'not_configured':
        countProbeNotConfigured(requestId, startedAt);
        logger.warn('Synthetic probe not configured: its secret holds no API key, so nothing was probed', {
          fix: 'Store an API key of this stage in the secret of the stack output ProbeApiKeySecretArn (docs/operations.md, "Synthetic probe").',
        });
        break;
      case 'key_unreadable':
        recordProbeRun({ success: false }, requestId, startedAt);
        logger.error('Synthetic probe failed: could not read its API key', { reason: outcome.reason });
        break;
      case 'passed':
      case 'failed': {
        recordProbeRun({ success: outcome.status === 'passed', latencyMs: outcome.latencyMs }, requestId, startedAt);
        const summary = { latencyMs: outcome.latencyMs, steps: outcome.steps };
        if (outcome.status === 'passed') logger.info('Synthetic probe passed', summary);
        else logger.error(`Synthetic probe failed: ${outcome.steps.find((step) => !step.passed)?.title}`, summary);
        break;
      }
      default:
        unhandled(outcome);
    }
    return outcome;
  };
  return (_event: unknown, context: Pick<Context, 'functionName' | 'awsRequestId'>): Promise<ProbeOutcome> =>
    logger.runInvocation(() => probe(context));
}
