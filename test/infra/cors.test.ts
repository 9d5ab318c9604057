import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staging, type StageConfig } from '../../infra/stages';
import { routes } from '../../shared/routes';
import { synthesize, type Synthesis } from './synth';

const withBrowserClient: StageConfig = {
  ...staging,
  name: 'browser',
  stackName: 'AnimalStore-Browser',
  cors: { allowOrigins: ['https://shop.example.com'], maxAgeSeconds: 300 },
};

describe('a stage configured for a browser client', () => {
  let synthesis: Synthesis;
  beforeAll(() => {
    // CORS lives in the API definition only: bundles are irrelevant here.
    synthesis = synthesize({ stages: [withBrowserClient], context: { 'aws:cdk:bundling-stacks': [] } });
  });
  afterAll(() => synthesis?.dispose());

  it('allows exactly the configured origins, the methods of the route table and the headers clients send', () => {
    synthesis.stage('browser').template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      CorsConfiguration: {
        AllowOrigins: ['https://shop.example.com'],
        AllowMethods: [...new Set(routes.map((route) => route.method))],
        AllowHeaders: ['authorization', 'content-type'],
        MaxAge: 300,
      },
    });
  });

  it('lets the browser read pagination, location and deprecation headers', () => {
    const [api] = Object.values(synthesis.stage('browser').template.findResources('AWS::ApiGatewayV2::Api'));
    expect(api!.Properties.CorsConfiguration.ExposeHeaders).toEqual(['link', 'location', 'deprecation', 'sunset']);
  });

  it('never allows credentials: API keys travel in the Authorization header, not in cookies', () => {
    const [api] = Object.values(synthesis.stage('browser').template.findResources('AWS::ApiGatewayV2::Api'));
    expect(api!.Properties.CorsConfiguration.AllowCredentials).toBeUndefined();
  });
});
