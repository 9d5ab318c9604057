import { authorizer, OPERATION_IDS, routeNotFoundHandler, routes } from '../shared/facts/routes';
import type { FunctionHandler } from '../shared/runtime/function-config';

/**
 * Every name a developer may give a function locally (invoke, the ENV_VARS file), to its handler file:
 * the README's names, the stage's and the handler files'.
 */
const HANDLERS_BY_NAME: ReadonlyMap<string, FunctionHandler> = new Map<string, FunctionHandler>([
  ...routes.map((route): [string, FunctionHandler] => [route.operationId, route.handler]),
  ['routeNotFound', routeNotFoundHandler],
  [authorizer.handler, authorizer.handler],
  ['authorizer', authorizer.handler],
  ...routes.map((route): [string, FunctionHandler] => [route.handler, route.handler]),
  [routeNotFoundHandler, routeNotFoundHandler],
]);

/** The names a message lists: the README's. */
export const FUNCTION_NAMES: readonly string[] = [...OPERATION_IDS, 'routeNotFound', 'authorizer'];

/** The handler file of the function a developer named, or undefined when no function has that name. */
export function handlerNamed(name: string): FunctionHandler | undefined {
  return HANDLERS_BY_NAME.get(name);
}
