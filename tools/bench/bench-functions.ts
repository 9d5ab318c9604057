import type { FunctionName } from '../../infra/api-functions';

/** The functions behind a route, routeNotFound included: what the warm section invokes with HTTP events. */
export const ROUTE_FUNCTIONS: readonly FunctionName[] = ['listPets', 'createPet', 'getPet', 'routeNotFound'];
export const ALL_FUNCTIONS: readonly FunctionName[] = [...ROUTE_FUNCTIONS, 'authorizer'];

/**
 * The fallback issues no command: its floor is an empty file, so a ratio to it measures the logger and
 * the error vocabulary, not overhead on a DynamoDB call, and is not judged.
 */
export function issuesCommand(name: FunctionName): boolean {
  return name !== 'routeNotFound';
}
