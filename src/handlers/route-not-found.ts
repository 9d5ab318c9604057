import { MethodNotAllowedError, NotFoundError } from '../http/errors';
import { createHttpHandler } from '../http/handler';
import { allowedMethods } from '../facts/routes';

/**
 * API Gateway's `$default` route: every request no route matched. It sits behind the authorizer
 * like the others, so an anonymous caller learns nothing about which paths exist.
 */
export const handler = createHttpHandler(undefined, async (event) => {
  const allowed = allowedMethods(event.rawPath);
  if (allowed.length > 0) throw new MethodNotAllowedError(event.requestContext.http.method, allowed);
  throw new NotFoundError(`No route matches ${event.requestContext.http.method} ${event.rawPath}.`);
});
