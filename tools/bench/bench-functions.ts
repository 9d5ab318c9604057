import type { FunctionName } from '../../infra/api-functions';
import { routes } from '../../shared/facts/routes';

/**
 * The functions behind a route, routeNotFound included: what the warm section invokes with HTTP events.
 * From the route table, so an operation removed from it (getPet at its sunset) is no longer measured.
 */
export const ROUTE_FUNCTIONS: readonly FunctionName[] = [...routes.map((route) => route.operationId), 'routeNotFound'];
export const ALL_FUNCTIONS: readonly FunctionName[] = [...ROUTE_FUNCTIONS, 'authorizer'];

/**
 * The fallback issues no command: its floor only answers, so a ratio to it measures the logger and the
 * error vocabulary, not overhead on a DynamoDB call, and is not judged.
 */
export function issuesCommand(name: FunctionName): boolean {
  return name !== 'routeNotFound';
}

/** Whether the deployed API has this function: a section keeps an operation's scenarios only while its route exists. */
export function isDeployed(name: FunctionName): boolean {
  return ALL_FUNCTIONS.includes(name);
}
