import * as v from 'valibot';
import { ERROR_CODES } from '../../facts/error-codes';

/** Every verdict but `allowed`: why a request was refused (our 401), or that its key could not be checked (our 503). */
export const REFUSAL_OUTCOMES = ['missing', 'invalid', 'unavailable'] as const;

/**
 * What the Lambda authorizer hands to every route (`requestContext.authorizer.lambda`): its verdict,
 * which shared/http/handler.ts turns into our 401 unless `allowed` (docs/authentication.md).
 */
export const AuthorizerContextSchema = v.union([
  v.object({ outcome: v.literal('allowed'), keyId: v.string() }),
  v.object({ outcome: v.picklist(REFUSAL_OUTCOMES) }),
]);
export type AuthorizerContext = v.InferOutput<typeof AuthorizerContextSchema>;

/**
 * What the authorizer answers API Gateway with: its verdict and the version of the authorizer that gave it,
 * which the access log records (authorizerVersion) so a deployment can set the new version's refusals against
 * the old one's (infra/version-alarms.ts). Routes read only the verdict.
 */
export type AuthorizerAnswerContext = AuthorizerContext & { readonly version: string };

/**
 * The verdicts a deployment judges the authorizer's versions by, with the status each turns into: a key refused
 * (our 401), or one it could not look up (our 503). Not `missing`: that is the caller's, whichever version answers.
 */
export const JUDGED_VERDICT_STATUSES = {
  invalid: ERROR_CODES.unauthorized,
  unavailable: ERROR_CODES.service_unavailable,
} as const satisfies Partial<Record<AuthorizerContext['outcome'], number>>;
