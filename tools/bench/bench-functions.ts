import { routes } from '../../shared/facts/routes';
import type { ApiFunctionName } from '../../shared/facts/function-names';

/** What the warm section invokes with HTTP events; from the route table, so an operation it drops is no longer measured. */
export const ROUTE_FUNCTIONS: readonly ApiFunctionName[] = [...routes.map((route) => route.operationId), 'routeNotFound'];
export const ALL_FUNCTIONS: readonly ApiFunctionName[] = [...ROUTE_FUNCTIONS, 'authorizer'];

/**
 * The fallback issues no command: its floor only answers, so a ratio to it measures the logger and the error
 * vocabulary, not overhead on a DynamoDB call, and is not judged.
 */
export function issuesCommand(name: ApiFunctionName): boolean {
  return name !== 'routeNotFound';
}

/** Whether the deployed API has this function: a section keeps an operation's scenarios only while its route exists. */
export function isDeployed(name: ApiFunctionName): boolean {
  return ALL_FUNCTIONS.includes(name);
}
