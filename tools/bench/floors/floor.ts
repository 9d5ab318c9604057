import type { APIGatewayProxyEventV2, APIGatewayProxyResultV2 } from 'aws-lambda';

// What every floor shares, and only npm packages besides: a floor is the design's calls through the stock SDK
// client, so nothing of the project's code may reach it (test/tools/bench/floors.test.ts). What a floor is:
// docs/performance.md, "What it measures". The client is floor-client.ts's, so a floor that calls nothing loads no SDK.

/** What every floor answers with: a status and a JSON body, the least any API function must do with its command's result. */
export function answer(statusCode: number, body: unknown, headers: Record<string, string> = {}): APIGatewayProxyResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

/** The API's Error body, as every refusal of the design carries it. */
export function answerError(status: number, code: string, message: string, headers: Record<string, string> = {}): APIGatewayProxyResultV2 {
  return answer(status, { code, message, status }, headers);
}

/** Every route's first step: a key the authorizer did not accept is our 401, its reason in RFC 6750's header. */
export function refusal(event: APIGatewayProxyEventV2): APIGatewayProxyResultV2 | undefined {
  const outcome = (event.requestContext as { authorizer?: { lambda?: { outcome?: string } } }).authorizer?.lambda?.outcome;
  if (outcome === 'allowed') return undefined;
  return outcome === 'invalid'
    ? answerError(401, 'unauthorized', 'The API key is invalid or has been revoked.', {
        'www-authenticate': 'Bearer realm="animal-store", error="invalid_token"',
      })
    : answerError(401, 'unauthorized', 'An API key is required: send it as "Authorization: Bearer <API key>".', {
        'www-authenticate': 'Bearer realm="animal-store"',
      });
}

/** A store that failed after every attempt: our 503, which a client retries. */
export function unavailable(): APIGatewayProxyResultV2 {
  return answerError(503, 'service_unavailable', 'The service is temporarily unavailable; retry shortly.', { 'retry-after': '1' });
}

/** A variable the function's template sets; a floor run without it is a bench bug. */
export function required(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

/** A stored pet as the API answers it: without what the table keeps beside it (index keys, creation time, the create's token). */
export function petOf(item: Record<string, unknown>): Record<string, unknown> {
  const {
    collection: _collection,
    createdKey: _createdKey,
    statusShard: _statusShard,
    createdAt: _createdAt,
    creationToken: _token,
    ...pet
  } = item;
  return pet;
}
