import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { answerError, refusal } from './floor';

/** The fallback's floor: it issues no command, so its floor is the refusal or the answer and nothing else. */
export const handler = async (event: APIGatewayProxyEventV2) =>
  refusal(event) ?? answerError(404, 'not_found', `No route matches ${event.requestContext.http.method} ${event.rawPath}.`);
