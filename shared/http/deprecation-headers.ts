import type { Deprecation } from '../facts/routes';

/** The `Deprecation` (RFC 9745, `@<epoch seconds>`) and `Sunset` (RFC 8594, HTTP date) header values. */
export function deprecationHeaderValues(deprecation: Deprecation): { deprecation: string; sunset: string } {
  return { deprecation: `@${Math.floor(deprecation.since.getTime() / 1000)}`, sunset: deprecation.sunset.toUTCString() };
}
