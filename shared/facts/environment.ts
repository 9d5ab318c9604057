/**
 * The environment variables the functions read, named once for infra/, local/ and the functions, so a
 * misspelt one is a compile error. The POWERTOOLS_ names are kept so Powertools' documentation applies.
 */
export const ENV = {
  /** The pets table (every route function). */
  petsTable: 'PETS_TABLE_NAME',
  /** The API keys table (the authorizer). */
  apiKeysTable: 'API_KEYS_TABLE_NAME',
  /** The Idempotency-Key records table (createPet). */
  idempotencyTable: 'IDEMPOTENCY_TABLE_NAME',
  /** The listing shards every page reads (listPets; shared/facts/listing.ts). */
  listingShards: 'PETS_LISTING_SHARDS',
  /** The listing shards a new pet goes to, one chosen by its id (createPet): fewer than listPets reads only while a raise rolls out. */
  writeShards: 'PETS_WRITE_SHARDS',
  /** Signs pagination cursors (listPets). */
  cursorSecret: 'CURSOR_SECRET',
  /** The functions' log level (shared/runtime/logger.ts). */
  logLevel: 'POWERTOOLS_LOG_LEVEL',
  /** The CloudWatch namespace of the business metrics (shared/runtime/metrics.ts). */
  metricsNamespace: 'POWERTOOLS_METRICS_NAMESPACE',
  /** Turns the business metrics off (the unit tests). */
  metricsDisabled: 'POWERTOOLS_METRICS_DISABLED',
  /** Each function behind the API's deployed name, by its one name, as JSON: what the pre-traffic hook and the deployment traffic invoke. */
  preTrafficTargets: 'PRE_TRAFFIC_CHECK_TARGETS',
  /** The function that sends a deployment's canary its traffic, which the pre-traffic hook starts once a new version passed. */
  deploymentTrafficFunction: 'DEPLOYMENT_TRAFFIC_FUNCTION',
  /** The base URL the synthetic probe checks: the stage's own BaseUrl (functions/synthetic-probe/probe-run.ts). */
  probeBaseUrl: 'PROBE_BASE_URL',
  /** The secret that holds the synthetic probe's API key, by ARN. */
  probeApiKeySecret: 'PROBE_API_KEY_SECRET_ARN',
} as const;
