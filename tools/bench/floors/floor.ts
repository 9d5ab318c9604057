import type { APIGatewayProxyResultV2 } from 'aws-lambda';

/**
 * What every floor answers with: a status and a JSON body, the least any API function must do with its one
 * DynamoDB command's result. What a floor is: docs/performance.md, "What it measures".
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
