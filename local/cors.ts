import * as startCorsPolicy from '../shared/http/cors-policy';
import type { CorsConfig } from '../shared/http/cors-policy';
import type { IncomingRequest, OutgoingResponse } from './api-gateway-events';

/**
 * API Gateway's CORS for HTTP APIs, emulated from the deployed API's policy as AWS documents it
 * ("Configuring CORS for an HTTP API"). A preflight from a disallowed origin gets 204 without CORS
 * headers here; AWS's exact status is unverified, but the browser refuses it either way.
 */
/** The lists shared/http/cors-policy.ts gives API Gateway: methods, request headers and response headers. */
export type CorsPolicy = Pick<typeof startCorsPolicy, 'CORS_ALLOW_HEADERS' | 'CORS_ALLOW_METHODS' | 'CORS_EXPOSE_HEADERS'>;

export class CorsEmulation {
  /** `policy`: the lists as the sources are now (npm run dev reloads them); as this process loaded them by default. */
  constructor(
    private readonly config: CorsConfig,
    private readonly policy: CorsPolicy = startCorsPolicy,
  ) {}

  /** Whether the stage allows any origin at all; without one API Gateway has no CORS configuration. */
  get enabled(): boolean {
    return this.config.allowOrigins.length > 0;
  }

  /** A browser's preflight: OPTIONS with the origin and the method it asks about. */
  isPreflight(request: IncomingRequest): boolean {
    return (
      this.enabled &&
      request.method === 'OPTIONS' &&
      header(request, 'origin') !== undefined &&
      header(request, 'access-control-request-method') !== undefined
    );
  }

  /** API Gateway's own answer to a preflight. */
  answerPreflight(request: IncomingRequest): OutgoingResponse {
    const origin = this.allowedOrigin(request);
    const method = header(request, 'access-control-request-method')?.toUpperCase() ?? '';
    const { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS } = this.policy;
    const allowed = origin !== undefined && (CORS_ALLOW_METHODS as readonly string[]).includes(method);
    return {
      statusCode: 204,
      headers: allowed
        ? {
            'access-control-allow-origin': origin,
            'access-control-allow-methods': CORS_ALLOW_METHODS.join(','),
            'access-control-allow-headers': CORS_ALLOW_HEADERS.join(','),
            'access-control-max-age': String(this.config.maxAgeSeconds),
          }
        : {},
      cookies: [],
      body: Buffer.alloc(0),
    };
  }

  /** The answer to a request as the client receives it: CORS headers added for an allowed origin, the integration's own dropped. */
  decorate(request: IncomingRequest, response: OutgoingResponse): OutgoingResponse {
    if (!this.enabled) return response;
    const headers = Object.fromEntries(Object.entries(response.headers).filter(([name]) => !name.startsWith('access-control-')));
    const origin = this.allowedOrigin(request);
    if (origin !== undefined) {
      headers['access-control-allow-origin'] = origin;
      headers['access-control-expose-headers'] = this.policy.CORS_EXPOSE_HEADERS.join(',');
    }
    return { ...response, headers };
  }

  /** The value of Access-Control-Allow-Origin for this request, or undefined when its origin is not allowed. */
  private allowedOrigin(request: IncomingRequest): string | undefined {
    const origin = header(request, 'origin');
    if (origin === undefined) return undefined;
    if (this.config.allowOrigins.includes('*')) return '*';
    return this.config.allowOrigins.includes(origin) ? origin : undefined;
  }
}

function header(request: IncomingRequest, name: string): string | undefined {
  return request.headers.find(([candidate]) => candidate.toLowerCase() === name)?.[1];
}

/**
 * `CORS_ALLOW_ORIGINS` of `npm start`: comma-separated origins (`http://localhost:5173`) or `*`.
 * Throws a message naming the variable for anything else, since a typo would silently block the browser.
 */
export function parseAllowedOrigins(variable: string, value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    if (origin === '*') return origin;
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new Error(`${variable} must list origins such as http://localhost:5173 (or *), got "${origin}"`);
    }
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) {
      throw new Error(
        `${variable} must list origins, scheme://host[:port] with no path or trailing slash, such as http://localhost:5173 (or *), got "${origin}"`,
      );
    }
    return origin;
  });
}
