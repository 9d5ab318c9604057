import type { APIGatewayProxyResultV2 } from 'aws-lambda';

/**
 * What every floor answers with: a status and a JSON body, the least any API function must do with
 * the result of its one DynamoDB command. The floors (tools/bench/floors/) are what `npm run bench` compares
 * each function with: the document client configured as shared/dynamodb/dynamodb-client.ts configures it (they call
 * it), the one command the function issues, built with the functions' own esbuild options, nothing else.
 */
export function answer(statusCode: number, body: unknown): APIGatewayProxyResultV2 {
  return { statusCode, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** A variable the function's template sets; a floor run without it is a bench bug. */
export function required(name: string): string {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}
