import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { answer } from './floor';

/** The fallback's floor: it issues no command, so its floor is an answer and nothing else. */
export const handler = async (event: APIGatewayProxyEventV2) =>
  answer(404, { code: 'not_found', message: `No route matches ${event.requestContext.http.method} ${event.rawPath}.`, status: 404 });
