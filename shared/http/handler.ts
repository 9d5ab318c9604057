import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import * as v from 'valibot';
import { AuthorizerContextSchema } from '../domain/auth/authorizer-context';
import { runWithDeadline } from '../runtime/deadline';
import { logger, summarizeError } from '../runtime/logger';
import { countAnswer, countColdStart } from '../runtime/metrics';
import { ERROR_CODES } from '../facts/error-codes';
import { BASE_PATH, findRoute, preflightRoute, type Deprecation, type OperationId } from '../facts/routes';
import { deprecationHeaderValues } from './deprecation-headers';
import { InvalidParameterError, ServiceUnavailableError, UnauthorizedError, type ApiError } from './errors';
import { apiUrl } from './request';
import { errorResponse, noContent, toApiError, type HttpResponse } from './responses';

/** The event as API Gateway delivers it to a route behind our Lambda authorizer. */
export type HttpEvent = APIGatewayProxyEventV2 & {
  requestContext: APIGatewayProxyEventV2['requestContext'] & { authorizer?: { lambda?: unknown } };
};

/** The authenticated client making the request. */
export interface Caller {
  readonly keyId: string;
}

export type RouteLogic = (event: HttpEvent, caller: Caller, context: Context) => Promise<HttpResponse>;

export type HttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResponse>;

/** Marks every handler createHttpHandler builds, so a test can prove each route authenticates through here. */
export const HTTP_HANDLER = Symbol('createHttpHandler');

/**
 * Wraps a route's logic into a Lambda handler: authentication first, then the logic under the
 * invocation's deadline, with every thrown error mapped to the Error body here and nowhere else.
 */
export function createHttpHandler(operationId: OperationId | undefined, logic: RouteLogic): HttpHandler {
  const route = operationId === undefined ? undefined : findRoute(operationId);
  const deprecated = route?.deprecation;
  const deprecationHeaders = deprecated && deprecationHeaderValues(deprecated);
  const refusesQuery = route !== undefined && !route.reads.includes('query');
  // What the route is for: its success, or for routeNotFound (no route) the 404 it exists to give.
  const ownAnswer = route?.successStatus ?? ERROR_CODES.not_found;
  // Each invocation's log keys are its own (Logger.runInvocation), whatever else runs in the instance.
  const handler: HttpHandler = (event, context) => logger.runInvocation(() => invoke(event, context));
  const invoke: HttpHandler = async (event, context) => {
    logger.addContext(context);
    logger.appendKeys({ requestId: event.requestContext.requestId, routeKey: event.routeKey });
    countColdStart(context.functionName, event.requestContext.requestId);
    // Unauthenticated by design, and reads nothing: see preflightRoute.
    if (event.routeKey === preflightRoute.routeKey) return noContent();
    let response: HttpResponse;
    // Only answers to a caller the authorizer accepted are this version's own: a refusal it relays is the authorizer's.
    let accepted = false;
    try {
      const caller = requireCaller(event);
      accepted = true;
      logger.appendKeys({ keyId: caller.keyId });
      if (refusesQuery) rejectQueryParameters(event);
      response = await runWithDeadline(context, () => logic(event, caller, context));
    } catch (error) {
      response = errorResponse(reportError(error));
    }
    if (accepted && response.statusCode !== ownAnswer) {
      countAnswer(context.functionName, context.functionVersion, response.statusCode, event.requestContext.requestId);
    }
    if (deprecated) Object.assign(response.headers, deprecationHeaders, successorLink(deprecated, event));
    return response;
  };
  return Object.defineProperty(handler, HTTP_HANDLER, { value: true });
}

/**
 * A query parameter sent to an operation that reads none is 400, as outside listPets' schema, so
 * `POST /v1/pets?status=sold` cannot create a pet without the status its sender believes it set.
 */
function rejectQueryParameters(event: HttpEvent): void {
  const [name] = Object.keys(event.queryStringParameters ?? {});
  if (name !== undefined) throw new InvalidParameterError(`${name} is not a query parameter of this operation.`);
}

function requireCaller(event: HttpEvent): Caller {
  const verdict = v.safeParse(AuthorizerContextSchema, event.requestContext.authorizer?.lambda);
  if (!verdict.success) {
    // Fail closed: a route deployed without the authorizer must not serve anonymous callers.
    logger.error('Route invoked without a valid authorizer context');
    throw new UnauthorizedError('missing');
  }
  switch (verdict.output.outcome) {
    case 'allowed':
      return { keyId: verdict.output.keyId };
    case 'unavailable':
      throw new ServiceUnavailableError();
    default:
      throw new UnauthorizedError(verdict.output.outcome);
  }
}

function reportError(error: unknown): ApiError {
  const apiError = toApiError(error);
  if (apiError.status === 500) logger.error('Request failed', error instanceof Error ? error : String(error));
  // An outage names the error and its causes, not their stacks: the same frames on every request of the outage,
  // paid for in log bytes by each and with the bundle's map by each instance's first. An unexpected error keeps its stack.
  else if (apiError.status > 500)
    logger.warn('Dependency unavailable', error instanceof Error ? { error: summarizeError(error) } : String(error));
  return apiError;
}

/** The `Link` to a deprecated operation's successor that goes with its RFC 9745 and RFC 8594 headers. */
function successorLink(deprecation: Deprecation, event: HttpEvent): { link: string } {
  return { link: `<${apiUrl(event, BASE_PATH + deprecation.successorPath)}>; rel="successor-version"` };
}
