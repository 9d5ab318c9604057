import * as v from 'valibot';
import { AuthorizerContextSchema } from '../../shared/domain/auth/authorizer-context';
import { ERROR_CODES } from '../../shared/facts/error-codes';
import { ErrorSchema } from '../../shared/http/error-schema';
import { unhandled } from '../../shared/runtime/unhandled';
import type { Check } from './pre-traffic-expectations';
import type { Expectation } from '../../shared/checks/check-requests';

/** What came back from invoking a function's new version with one check. */
export type InvocationOutcome =
  /** The function returned this value. */
  | { readonly kind: 'returned'; readonly payload: unknown }
  /** The function failed: it threw, crashed, ran out of memory or timed out (Lambda's `FunctionError`). */
  | { readonly kind: 'function-error'; readonly errorType: string; readonly errorMessage: string }
  /** No answer at all: the invocation was refused, throttled, or gave nothing back in time. */
  | { readonly kind: 'no-answer'; readonly reason: string };

export interface Verdict {
  /** The check's name. */
  readonly check: string;
  /** Whether it lets the new version through: its answer was right, or was excused. */
  readonly passed: boolean;
  /**
   * Passed though the answer was wrong, since no version is at fault: the old version answered the same
   * check wrong the same way (judgeAgainstOld), or the keys table would not take the check keys.
   */
  readonly excused?: true;
  /** What was seen: the answer when it passed, what was wrong when it did not, and why that was excused. */
  readonly detail: string;
}

/** The status CodeDeploy is told: the deployment goes on only when every check passed. */
export type HookStatus = 'Succeeded' | 'Failed';

const HttpAnswerSchema = v.object({
  statusCode: v.number(),
  headers: v.record(v.string(), v.string()),
  body: v.optional(v.string()),
});

const AuthorizerAnswerSchema = v.object({ isAuthorized: v.literal(true), context: AuthorizerContextSchema });

/** Judges one check by what its invocation gave back. */
export function judge(check: Check, outcome: InvocationOutcome): Verdict {
  const verdict = (passed: boolean, detail: string): Verdict => ({ check: check.name, passed, detail });
  switch (outcome.kind) {
    case 'no-answer':
      return verdict(false, `no answer: ${outcome.reason}`);
    case 'function-error':
      return verdict(false, `the function failed: ${outcome.errorType}: ${outcome.errorMessage}`);
    case 'returned': {
      const mismatch = mismatchOf(check.expect, outcome.payload);
      return mismatch === undefined ? verdict(true, describe(check.expect)) : verdict(false, mismatch);
    }
    default:
      return unhandled(outcome);
  }
}

/** Whether the version gave an answer to judge, right or wrong: it ran, or crashed (no-answer: it was never reached). */
export function answered(outcome: InvocationOutcome): boolean {
  return outcome.kind !== 'no-answer';
}

/**
 * The verdict on a check the new version failed, once the old version (the one serving now) was asked
 * the same: a failure the old version shows the same way (the same detail, as a 503 service_unavailable
 * from both while the store is down) is no fault of the new version's, so it is excused. Any other
 * failure stands: one the old version passes, or fails otherwise. So does one of a version that gave no
 * answer: it was never reached (throttled, not allowed), so nothing was judged, and excusing that would
 * let a version through unchecked whenever the hook cannot invoke either version.
 */
export function judgeAgainstOld(
  check: Check,
  onNew: InvocationOutcome,
  old: { readonly version: string; readonly outcome: InvocationOutcome },
): Verdict {
  const newVerdict = judge(check, onNew);
  if (newVerdict.passed) return newVerdict;
  const oldVerdict = judge(check, old.outcome);
  if (answered(onNew) && answered(old.outcome) && !oldVerdict.passed && oldVerdict.detail === newVerdict.detail) {
    return { ...newVerdict, passed: true, excused: true, detail: `${newVerdict.detail}: fails the same way on version ${old.version}` };
  }
  const onOld = oldVerdict.passed ? `passes on version ${old.version}` : `version ${old.version}: ${oldVerdict.detail}`;
  return { ...newVerdict, detail: `${newVerdict.detail} (${onOld})` };
}

/** Succeeded only when there was something to judge and all of it passed. */
export function hookStatus(verdicts: readonly Verdict[]): HookStatus {
  return verdicts.length > 0 && verdicts.every((verdict) => verdict.passed) ? 'Succeeded' : 'Failed';
}

function describe(expect: Expectation): string {
  switch (expect.kind) {
    case 'error':
      return `answered ${ERROR_CODES[expect.code]} ${expect.code}`;
    case 'listing':
      return 'answered 200 with a list';
    case 'verdict':
      return `authorized with the verdict ${expect.outcome}${expect.keyId === undefined ? '' : ` as ${expect.keyId}`}`;
    default:
      return unhandled(expect);
  }
}

/** What is wrong with an answer, or undefined when it is what the check expects. */
function mismatchOf(expect: Expectation, payload: unknown): string | undefined {
  if (expect.kind === 'verdict') {
    const answer = v.safeParse(AuthorizerAnswerSchema, payload);
    if (!answer.success) return `not an authorizer answer we give: ${excerpt(payload)}`;
    const verdict = answer.output.context;
    if (verdict.outcome !== expect.outcome) return `the verdict was ${verdict.outcome}, expected ${expect.outcome}`;
    const keyId = verdict.outcome === 'allowed' ? verdict.keyId : undefined;
    return expect.keyId === undefined || keyId === expect.keyId ? undefined : `allowed as ${keyId}, expected ${expect.keyId}`;
  }

  const answer = v.safeParse(HttpAnswerSchema, payload);
  if (!answer.success) return `not an HTTP answer: ${excerpt(payload)}`;
  const { statusCode, headers, body } = answer.output;
  const json = parseJson(body);
  const expectedStatus = expect.kind === 'error' ? ERROR_CODES[expect.code] : 200;
  if (statusCode !== expectedStatus) {
    const error = v.safeParse(ErrorSchema, json);
    return `answered ${statusCode}${error.success ? ` ${error.output.code}` : ''}, expected ${expectedStatus}`;
  }
  if (!headers['content-type']?.startsWith('application/json')) return `answered ${statusCode} without a JSON content type`;
  if (expect.kind === 'listing') return Array.isArray(json) ? undefined : `answered 200 with ${excerpt(body)}, not a list`;

  const error = v.safeParse(ErrorSchema, json);
  if (!error.success) return `answered ${statusCode} without our Error body: ${excerpt(body)}`;
  if (error.output.code !== expect.code) return `answered ${statusCode} ${error.output.code}, expected ${expect.code}`;
  if (error.output.status !== statusCode) return `answered ${statusCode} with an Error body saying ${error.output.status}`;
  return undefined;
}

function parseJson(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

/** Enough of an unexpected answer to recognise it in the log, never a whole page. */
function excerpt(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
