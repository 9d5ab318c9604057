import { API_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';

/**
 * The fallback issues no command: its floor only answers, so a ratio to it measures the logger and the error
 * vocabulary, not overhead on a DynamoDB call, and is not judged.
 */
export function issuesCommand(name: ApiFunctionName): boolean {
  return name !== 'routeNotFound';
}

/** Whether the deployed API has this function: a section keeps an operation's scenarios only while its route exists. */
export function isDeployed(name: ApiFunctionName): boolean {
  return (API_FUNCTIONS as readonly ApiFunctionName[]).includes(name);
}
