import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { HttpMethod, HttpNoneAuthorizer, HttpRoute, HttpRouteKey } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpUrlIntegration, HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { describe, expect, it } from 'vitest';
import type { CorsConfig } from '../../shared/http/cors-policy';
import { buildBareHttpApi } from '../helpers/bare-http-api';
import { preflightRoute, routeKey, routes } from '../../shared/facts/routes';
import { throttledRoutes, type ThrottleConfig } from '../../infra/stages';

/** A share per route the API can serve, the preflight route's included, each different, so a test sees which route got which. */
const THROTTLE = Object.fromEntries(
  throttledRoutes({ cors: { allowOrigins: ['https://shop.example.com'], maxAgeSeconds: 600 } }).map((route, index) => [
    route,
    { rateLimit: 10 * (index + 1) + 1, burstLimit: 10 * (index + 1) + 2 },
  ]),
) as ThrottleConfig;

/** The API construct with a distinct share per route and the given CORS setting. */
function build(cors: CorsConfig = { allowOrigins: [], maxAgeSeconds: 600 }) {
  return buildBareHttpApi({ throttle: THROTTLE, cors });
}

describe('the API construct', () => {
  it('puts every route behind the authorizer', () => {
    const { stack } = build();
    const routeResources = Object.values(Template.fromStack(stack).findResources('AWS::ApiGatewayV2::Route'));
    expect(routeResources).toHaveLength(routes.length + 1);
    for (const route of routeResources) expect(route.Properties.AuthorizationType, route.Properties.RouteKey).toBe('CUSTOM');
  });

  it('refuses to synthesize a route added without the authorizer', () => {
    const { stack, api, fn } = build();
    new HttpRoute(stack, 'Open', {
      httpApi: api.httpApi,
      routeKey: HttpRouteKey.with('/v1/open', HttpMethod.GET),
      integration: new HttpLambdaIntegration('OpenIntegration', fn('OpenFunction')),
      authorizer: new HttpNoneAuthorizer(),
    });
    expect(() => Template.fromStack(stack)).toThrow(/GET \/v1\/open is not behind the Lambda authorizer/);
  });

  it('refuses to synthesize a route to anything but a Lambda function', () => {
    const { stack, api } = build();
    api.httpApi.addRoutes({
      path: '/v1/elsewhere',
      methods: [HttpMethod.GET],
      integration: new HttpUrlIntegration('Elsewhere', 'https://example.com'),
    });
    expect(() => Template.fromStack(stack)).toThrow(/\/v1\/elsewhere does not invoke a Lambda function \(HTTP_PROXY\)/);
  });

  it('opens only an OPTIONS route for preflights, and only when CORS is on', () => {
    const { stack } = build({ allowOrigins: ['https://shop.example.com'], maxAgeSeconds: 60 });
    const open = Object.values(Template.fromStack(stack).findResources('AWS::ApiGatewayV2::Route'))
      .map((route) => route.Properties)
      .filter((route) => route.AuthorizationType !== 'CUSTOM');
    expect(open.map((route) => route.RouteKey)).toEqual([preflightRoute.routeKey]);
  });

  it("gives each route its own share of the stage's throttle, the preflight route only when CORS is on", () => {
    const settingsOf = (stack: Stack) => {
      const [stage] = Object.values(Template.fromStack(stack).findResources('AWS::ApiGatewayV2::Stage'));
      return stage!.Properties.RouteSettings;
    };
    const share = (route: keyof ThrottleConfig) => ({
      ThrottlingRateLimit: THROTTLE[route].rateLimit,
      ThrottlingBurstLimit: THROTTLE[route].burstLimit,
    });
    const closed = {
      ...Object.fromEntries(routes.map((route) => [routeKey(route), share(route.operationId)])),
      $default: share('routeNotFound'),
    };
    expect(settingsOf(build().stack)).toEqual(closed);
    expect(settingsOf(build({ allowOrigins: ['https://shop.example.com'], maxAgeSeconds: 600 }).stack)).toEqual({
      ...closed,
      [preflightRoute.routeKey]: share('preflight'),
    });
  });

  it('refuses to synthesize a route with no share of the throttle, which would admit requests beyond the cap', () => {
    const { stack, api, fn } = build();
    new HttpRoute(stack, 'Extra', {
      httpApi: api.httpApi,
      routeKey: HttpRouteKey.with('/v1/extra', HttpMethod.GET),
      integration: new HttpLambdaIntegration('ExtraIntegration', fn('ExtraFunction')),
      authorizer: new HttpNoneAuthorizer(),
    });
    expect(() => Template.fromStack(stack)).toThrow(/GET \/v1\/extra has no share of the stage's throttle/);
  });
});
