import { ROUTE_FUNCTIONS } from '../../shared/facts/function-names';
import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staging, type StageConfig } from '../../infra/stages';
import { routes } from '../../shared/facts/routes';
import { synthesize, type Synthesis } from '../../tools/lambda/synth';

/** Variants of a stage config, to check that the settings ops may change do what they say. */
const browser: StageConfig = {
  ...staging,
  name: 'browser',
  stackName: 'AnimalStore-Browser',
  cors: { allowOrigins: ['https://shop.example.com'], maxAgeSeconds: 300 },
};
const rotated: StageConfig = { ...staging, name: 'rotated', stackName: 'AnimalStore-Rotated', cursorSecretGeneration: 2 };
const paged: StageConfig = {
  ...staging,
  name: 'paged',
  stackName: 'AnimalStore-Paged',
  alarmSubscriptions: [{ topicArn: 'arn:aws:sns:eu-west-1:111111111111:ops-pager' }, { email: 'oncall@example.com' }],
};
const reserved: StageConfig = { ...staging, name: 'reserved', stackName: 'AnimalStore-Reserved', authorizerReservedConcurrency: 50 };

let synthesis: Synthesis;
beforeAll(() => {
  // These settings live in the templates only: bundles are irrelevant here.
  synthesis = synthesize({ stages: [staging, browser, rotated, paged, reserved], context: { 'aws:cdk:bundling-stacks': [] } });
});
afterAll(() => synthesis?.dispose());

describe('a stage configured for a browser client', () => {
  function cors() {
    const [api] = Object.values(synthesis.stage('browser').template.findResources('AWS::ApiGatewayV2::Api'));
    return api!.Properties.CorsConfiguration;
  }

  it('allows exactly the configured origins, the methods of the route table and the headers clients send', () => {
    expect(cors()).toEqual(
      expect.objectContaining({
        AllowOrigins: ['https://shop.example.com'],
        AllowMethods: [...new Set(routes.map((route) => route.method))],
        AllowHeaders: ['authorization', 'content-type', 'idempotency-key'],
        MaxAge: 300,
      }),
    );
  });

  it('lets the browser read pagination, location, replay, retry and deprecation headers', () => {
    expect(cors().ExposeHeaders).toEqual(['link', 'location', 'idempotent-replayed', 'retry-after', 'deprecation', 'sunset']);
  });

  it('lets preflights through without the authorizer, on an OPTIONS route to a Lambda function, and nothing else', () => {
    const { template } = synthesis.stage('browser');
    const routeKeys = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map((route) => route.Properties);
    const open = routeKeys.filter((route) => route.AuthorizationType !== 'CUSTOM');
    expect(open).toEqual([expect.objectContaining({ RouteKey: 'OPTIONS /{proxy+}', AuthorizationType: 'NONE' })]);
  });

  it('has no unauthenticated route at all when no origin is configured', () => {
    const routes = Object.values(synthesis.stage('staging').template.findResources('AWS::ApiGatewayV2::Route'));
    for (const route of routes) expect(route.Properties.AuthorizationType, route.Properties.RouteKey).toBe('CUSTOM');
  });

  it('never allows credentials: API keys travel in the Authorization header, not in cookies', () => {
    expect(cors().AllowCredentials).toBeUndefined();
  });
});

describe('rotating the cursor key', () => {
  function cursorSecretOf(name: string) {
    const { stack, json } = synthesis.stage(name);
    const [secretId] = Object.keys(synthesis.stage(name).template.findResources('AWS::SecretsManager::Secret'));
    const listPets = stack.functions.of('listPets').function.node.defaultChild as CfnElement;
    return { secretId, reference: json.Resources[stack.getLogicalId(listPets)]!.Properties!.Environment.Variables.CURSOR_SECRET };
  }

  it('replaces the secret and points the list function at the new one in the same deploy', () => {
    const before = cursorSecretOf('staging');
    const after = cursorSecretOf('rotated');
    expect(after.secretId).not.toBe(before.secretId);
    expect(JSON.stringify(after.reference)).toContain(after.secretId);
  });
});

describe('a stage whose alarms page an existing topic and an e-mail address', () => {
  it('notifies its own topic and the existing one when any alarm fires and when it clears', () => {
    const { template, stack } = synthesis.stage('paged');
    const ownTopic = { Ref: stack.getLogicalId(stack.monitoring.topic.node.defaultChild as CfnElement) };
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([ownTopic, 'arn:aws:sns:eu-west-1:111111111111:ops-pager']);
      expect(alarm.Properties.OKActions).toEqual(alarm.Properties.AlarmActions);
    }
  });

  it('subscribes the e-mail address to its own topic', () => {
    const { template } = synthesis.stage('paged');
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@example.com' });
  });

  it('still notifies its own topic when no subscription is configured, so alarms reach whoever subscribes later', () => {
    const { template, stack } = synthesis.stage('staging');
    const ownTopic = { Ref: stack.getLogicalId(stack.monitoring.topic.node.defaultChild as CfnElement) };
    for (const alarm of Object.values(template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([ownTopic]);
    }
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });
});

describe('reserved concurrency for the authorizer', () => {
  function reservations(name: string) {
    const { stack, json } = synthesis.stage(name);
    return stack.functions.all.map((fn) => [
      fn.node.id,
      json.Resources[stack.getLogicalId(fn.function.node.defaultChild as CfnElement)]!.Properties!.ReservedConcurrentExecutions,
    ]);
  }

  it('reserves the configured executions for the authorizer alone', () => {
    expect(Object.fromEntries(reservations('reserved'))).toEqual({
      ...Object.fromEntries(ROUTE_FUNCTIONS.map((name) => [name, undefined])),
      authorizer: 50,
    });
  });

  it('reserves nothing by default, so a fresh account (which cannot reserve) can deploy', () => {
    for (const [name, reserved] of reservations('staging')) expect(reserved, String(name)).toBeUndefined();
  });
});
