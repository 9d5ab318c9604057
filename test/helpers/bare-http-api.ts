import { App, RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AnimalStoreHttpApi, type AnimalStoreHttpApiProps } from '../../infra/animal-store-http-api';
import { staging } from '../../infra/stages';
import { routes } from '../../shared/facts/routes';

/**
 * The AnimalStoreHttpApi construct on its own, on a bare stack, with stand-in functions: staging's
 * throttle and no CORS origin unless the test gives its own props. `fn` makes one more stand-in.
 */
export function buildBareHttpApi(props: Partial<AnimalStoreHttpApiProps> = {}, stackProps: StackProps = {}) {
  const stack = new Stack(new App(), 'Bare', stackProps);
  const fn = (id: string) =>
    new LambdaFunction(stack, id, {
      runtime: Runtime.NODEJS_24_X,
      handler: 'index.handler',
      code: Code.fromInline('export const handler = async () => ({})'),
    });
  const api = new AnimalStoreHttpApi(stack, 'Api', {
    functions: new Map([
      ...routes.map((route) => [route.operationId, fn(route.operationId)] as const),
      ['routeNotFound', fn('Fallback')],
      ['authorizer', fn('Authorizer')],
    ]),
    throttle: staging.throttle,
    cors: { allowOrigins: [], maxAgeSeconds: 600 },
    logRetention: RetentionDays.ONE_WEEK,
    removalPolicy: RemovalPolicy.DESTROY,
    ...props,
  });
  return { stack, api, fn };
}
