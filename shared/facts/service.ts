/**
 * The service's name in every structured log line (the `service` key, shared/runtime/logger.ts) and the
 * `service` dimension of every metric. Plain constant: infra/ and the dashboard read it without the
 * runtime.
 */
export const SERVICE_NAME = 'animal-store';
