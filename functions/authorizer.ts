import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerWithContextResult } from 'aws-lambda';
import type { AuthorizerAnswerContext } from '../shared/domain/auth/authorizer-context';
import { createAuthenticator } from '../shared/domain/auth/authenticate';
import { DynamoApiKeyStore } from '../shared/dynamodb/dynamo-api-key-store';
import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';
import { runWithDeadline } from '../shared/runtime/deadline';
import { createDocumentClient } from '../shared/dynamodb/dynamodb-client';
import { ENV } from '../shared/facts/environment';
import { logger } from '../shared/runtime/logger';
import { countColdStart } from '../shared/runtime/metrics';

const config = readConfig(FUNCTION_CONFIG.authorizer);
const authenticate = createAuthenticator(new DynamoApiKeyStore(createDocumentClient(), config[ENV.apiKeysTable]));

/**
 * The one place API keys are verified. It always authorizes and passes its verdict on in the
 * context: the route turns a failed verdict into our 401 Error body, which API Gateway's own
 * 403 for `isAuthorized: false` could not be. See docs/authentication.md.
 */
export const handler = (
  event: APIGatewayRequestAuthorizerEventV2,
  context: AuthorizerInvocation,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerAnswerContext>> => logger.runInvocation(() => authorize(event, context));

type AuthorizerInvocation = { awsRequestId: string; functionName: string; functionVersion: string; getRemainingTimeInMillis(): number };

async function authorize(
  event: APIGatewayRequestAuthorizerEventV2,
  context: AuthorizerInvocation,
): Promise<APIGatewaySimpleAuthorizerWithContextResult<AuthorizerAnswerContext>> {
  logger.appendKeys({ requestId: event.requestContext.requestId, routeKey: event.routeKey, invocationId: context.awsRequestId });
  countColdStart(context.functionName, event.requestContext.requestId);
  // Under the deadline, a stalled key lookup ends as `unavailable` (our 503), never a timed-out
  // authorizer, which API Gateway would answer with its own 500.
  const verdict = await runWithDeadline(context, () => authenticate(event.headers?.authorization));
  // The access log carries every verdict, and the refusal metric is counted from it (infra/monitoring.ts):
  // a line here would only make a flood of refused requests cost more. A failed lookup logs its error.
  logger.debug(verdict.outcome === 'allowed' ? 'API key accepted' : 'API key refused', { ...verdict });
  return { isAuthorized: true, context: { ...verdict, version: context.functionVersion } };
}
