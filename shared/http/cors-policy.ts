import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from '../domain/idempotency/idempotency-key';
import { routes, type HttpMethod } from '../facts/routes';

/**
 * The CORS policy of the HTTP API, with no CDK in it, so the deployed API and the local gateway give a
 * browser the same answers.
 */

/** Where a stage lets browsers call from, and how long they may cache a preflight. */
export interface CorsConfig {
  /** Origins browsers may call the API from (`https://app.example.com`); empty means no CORS headers at all. */
  readonly allowOrigins: readonly string[];
  /** How long browsers may cache a preflight answer, in seconds. */
  readonly maxAgeSeconds: number;
}

/** Request headers a browser may send: the bearer key, the JSON body's type, and retry keys. */
export const CORS_ALLOW_HEADERS: readonly string[] = ['authorization', 'content-type', IDEMPOTENCY_KEY_HEADER];

/** Response headers browsers may read: pagination, the created resource, replays, and deprecation notices. */
export const CORS_EXPOSE_HEADERS: readonly string[] = [
  'link',
  'location',
  IDEMPOTENT_REPLAYED_HEADER,
  'retry-after',
  'deprecation',
  'sunset',
];

/** How long browsers may cache a preflight answer: every stage's, and the local API's. */
export const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** Every method some route serves: what a preflight may ask for. */
export const CORS_ALLOW_METHODS: readonly HttpMethod[] = [...new Set(routes.map((route) => route.method))];
