import { MethodNotAllowedError, NotFoundError } from '../shared/http/errors';
import { createHttpHandler } from '../shared/http/handler';
import { allowedMethods } from '../shared/facts/routes';
import { readConfig } from '../shared/runtime/config';
import { FUNCTION_CONFIG } from '../shared/runtime/function-config';

/**
 * API Gateway's `$default` route: every request no route matched. It sits behind the authorizer
 * like the others, so an anonymous caller learns nothing about which paths exist.
 */

// It reads no variable of its own, but a bad log or metrics setting still fails its cold start, as in every function.
readConfig(FUNCTION_CONFIG.routeNotFound);

export const handler = createHttpHandler(undefined, async (event) => {
  const allowed = allowedMethods(event.rawPath);
  if (allowed.length > 0) throw new MethodNotAllowedError(event.requestContext.http.method, allowed);
  throw new NotFoundError(`No route matches ${event.requestContext.http.method} ${event.rawPath}.`);
});
