import type { ACCESS_LOG_FIELDS } from '../../infra/animal-store-http-api';
import { SYSTEM_LOG_LEVEL } from '../../infra/api-function';

// Log bytes a request costs outside the functions' own output, for the bill: Lambda's platform lines (JSON log format)
// and API Gateway's access log line, from sample values of typical length (an estimate).
const REQUEST_ID = '6d1e2b7a-8c1f-4c5e-9b1a-3f2d1e0c9a8b';

const PLATFORM_LINES = [
  { time: '2026-11-23T12:00:00.000Z', type: 'platform.start', record: { requestId: REQUEST_ID, version: '12' } },
  {
    time: '2026-11-23T12:00:00.004Z',
    type: 'platform.report',
    record: {
      requestId: REQUEST_ID,
      metrics: { durationMs: 3.61, billedDurationMs: 4, memorySizeMB: 512, maxMemoryUsedMB: 92 },
      status: 'success',
    },
  },
];

const ACCESS_LOG_SAMPLE: Record<keyof typeof ACCESS_LOG_FIELDS, string> = {
  requestId: 'Jx2gHhHbDoEEMYw=',
  requestTime: '23/Nov/2026:12:00:00 +0000',
  ip: '203.0.113.17',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  httpMethod: 'GET',
  path: '/v1/pets',
  routeKey: 'GET /v1/pets',
  status: '200',
  protocol: 'HTTP/1.1',
  responseLength: '2417',
  responseLatency: '21',
  integrationLatency: '17',
  integrationStatus: '200',
  integrationError: '-',
  authorizerOutcome: 'allowed',
  keyId: 'key_3f9a1c0d2b7e4a61',
  authorizerError: '-',
  authorizerVersion: '12',
  error: '-',
};

/** Bytes Lambda logs for one invocation of a function, beside what the function writes itself: none at WARN. */
const PLATFORM_BYTES_PER_INVOCATION =
  SYSTEM_LOG_LEVEL === 'WARN' ? 0 : PLATFORM_LINES.reduce((bytes, line) => bytes + JSON.stringify(line).length + 1, 0);

/** What a request's log costs beside its two functions' own lines: Lambda's for each invocation, and the access log line. */
export const LOG_BYTES_BESIDE_FUNCTIONS = 2 * PLATFORM_BYTES_PER_INVOCATION + JSON.stringify(ACCESS_LOG_SAMPLE).length + 1;
