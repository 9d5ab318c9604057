import * as v from 'valibot';

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
