import type { CfnElement } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staging, type StageConfig } from '../../infra/stages';
import { routes } from '../../shared/routes';
import { synthesize, type Synthesis } from './synth';

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
  alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:ops-pager',
};

let synthesis: Synthesis;
beforeAll(() => {
  // These settings live in the templates only: bundles are irrelevant here.
  synthesis = synthesize({ stages: [staging, browser, rotated, paged], context: { 'aws:cdk:bundling-stacks': [] } });
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
        AllowHeaders: ['authorization', 'content-type'],
        MaxAge: 300,
      }),
    );
  });

  it('lets the browser read pagination, location and deprecation headers', () => {
    expect(cors().ExposeHeaders).toEqual(['link', 'location', 'deprecation', 'sunset']);
  });

  it('never allows credentials: API keys travel in the Authorization header, not in cookies', () => {
    expect(cors().AllowCredentials).toBeUndefined();
  });
});

describe('rotating the cursor key', () => {
  function cursorSecretOf(name: string) {
    const { stack, json } = synthesis.stage(name);
    const [secretId] = Object.keys(synthesis.stage(name).template.findResources('AWS::SecretsManager::Secret'));
    const listPets = stack.functions.routes.get('list-pets')!.function.node.defaultChild as CfnElement;
    return { secretId, reference: json.Resources[stack.getLogicalId(listPets)]!.Properties!.Environment.Variables.CURSOR_SECRET };
  }

  it('replaces the secret and points the list function at the new one in the same deploy', () => {
    const before = cursorSecretOf('staging');
    const after = cursorSecretOf('rotated');
    expect(after.secretId).not.toBe(before.secretId);
    expect(JSON.stringify(after.reference)).toContain(after.secretId);
  });
});

describe('a stage with an alarm topic', () => {
  it('notifies the topic when any alarm fires and when it clears', () => {
    const alarms = Object.values(synthesis.stage('paged').template.findResources('AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThan(0);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([paged.alarmTopicArn]);
      expect(alarm.Properties.OKActions).toEqual([paged.alarmTopicArn]);
    }
  });

  it('notifies nobody when no topic is configured', () => {
    for (const alarm of Object.values(synthesis.stage('staging').template.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toBeUndefined();
    }
  });
});
