import * as v from 'valibot';

/**
 * What the Lambda authorizer hands to every route (`requestContext.authorizer.lambda`): its verdict,
 * which shared/http/handler.ts turns into our 401 unless `allowed` (docs/authentication.md).
 */
export const AuthorizerContextSchema = v.union([
  v.object({ outcome: v.literal('allowed'), keyId: v.string() }),
  v.object({ outcome: v.picklist(['missing', 'invalid', 'unavailable']) }),
]);
export type AuthorizerContext = v.InferOutput<typeof AuthorizerContextSchema>;
