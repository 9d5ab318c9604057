import * as v from 'valibot';

/**
 * What the Lambda authorizer hands to every route (`requestContext.authorizer.lambda`).
 *
 * The authorizer always answers `isAuthorized: true` and puts its verdict here, because an HTTP API
 * turns a "no" into its own 403 `{"message":"Forbidden"}`, which is not our contract. The route's
 * handler adapter (shared/http/handler.ts) turns any verdict but `allowed` into our 401 before the
 * route runs. See docs/authentication.md.
 */
export const AuthorizerContextSchema = v.union([
  v.object({ outcome: v.literal('allowed'), keyId: v.string() }),
  v.object({ outcome: v.picklist(['missing', 'invalid', 'unavailable']) }),
]);
export type AuthorizerContext = v.InferOutput<typeof AuthorizerContextSchema>;
