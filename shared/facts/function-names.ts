import { OPERATION_IDS } from './routes';

/**
 * Every function's one name: the key of every table, map and message that concerns it, in shared/,
 * infra/, local/ and tools/. What each function is, by that name: shared/catalog/function-catalog.ts.
 */

/**
 * The functions behind the API: one per operation, routeNotFound for unmatched requests, and the authorizer.
 * Each takes traffic through its `live` alias, which CodeDeploy moves once the pre-traffic hook has checked it.
 */
export const API_FUNCTIONS = [...OPERATION_IDS, 'routeNotFound', 'authorizer'] as const;
export type ApiFunctionName = (typeof API_FUNCTIONS)[number];

/** The functions API Gateway invokes with a request to answer: every function behind the API but the authorizer, which fronts them. */
export const ROUTE_FUNCTIONS = [...OPERATION_IDS, 'routeNotFound'] as const;
export type RouteFunctionName = (typeof ROUTE_FUNCTIONS)[number];

/** Every function a stage deploys: the API's, and the three that check a deployed stage and its deployments. */
export const FUNCTION_NAMES = [...API_FUNCTIONS, 'preTrafficHook', 'deploymentTraffic', 'syntheticProbe'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number];

/**
 * The one rule from a function's name to the base name of its entry point in functions/ (and of its
 * sample event, its floor and its room): the name in kebab case, so createPet is functions/create-pet.ts.
 */
export function fileNameOf(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
