import { PETS_INDEXES } from '../helpers/pets-indexes';
import type { CfnElement } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import type { IConstruct } from 'constructs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiFunction } from '../../infra/api-function';
import { apiThrottle, production, staging, stages, type StageConfig } from '../../infra/stages';
import { API_GATEWAY_AUTHORIZER_TIMEOUT_MS, API_GATEWAY_INTEGRATION_TIMEOUT_MS } from '../../shared/facts/time-budget';
import { dynamoDbCallBudgetMs } from '../../shared/dynamodb/dynamodb-client';
import { localStageVariables, tableDefinitions } from '../../local/dynamodb-local';
import { IDEMPOTENCY_TABLE } from '../../shared/dynamodb/idempotency-table';
import { ENV } from '../../shared/facts/environment';
import { routeKey, routes } from '../../shared/facts/routes';
import { resourcesOfType, type SynthesizedStage } from '../../tools/lambda/synth';
import { grantsOf, statementsOfRole } from '../helpers/iam-statements';
import { synthesizedApp, type SharedSynthesis } from '../helpers/synthesized-app';

let synthesis: SharedSynthesis;
beforeAll(() => {
  synthesis = synthesizedApp();
});

function logicalId(stage: SynthesizedStage, construct: IConstruct): string {
  return stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

function ref(stage: SynthesizedStage, construct: IConstruct) {
  return { Ref: logicalId(stage, construct) };
}

function arnOf(stage: SynthesizedStage, construct: IConstruct) {
  return { 'Fn::GetAtt': [logicalId(stage, construct), 'Arn'] };
}

function functionsOf(stage: SynthesizedStage): ReadonlyMap<string, ApiFunction> {
  return stage.stack.functions.byName;
}

/** Every IAM statement attached to a role: a function's, the hook's or the synthetic probe's. */
function statementsOf(stage: SynthesizedStage, owner: { readonly role: IConstruct }): unknown[] {
  return statementsOfRole(stage.json, logicalId(stage, owner.role));
}

function dynamoDbStatementsOf(stage: SynthesizedStage, fn: ApiFunction): unknown[] {
  return statementsOf(stage, fn).filter((statement) => JSON.stringify(statement).includes('dynamodb:'));
}

function idempotencyStatement(stage: SynthesizedStage) {
  return {
    Effect: 'Allow',
    Action: ['dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'],
    Resource: arnOf(stage, stage.stack.idempotencyTable.table),
  };
}

function petsStatement(stage: SynthesizedStage, access: 'query' | 'get' | 'put') {
  const table = arnOf(stage, stage.stack.petsTable.table);
  switch (access) {
    case 'query':
      return {
        Effect: 'Allow',
        Action: 'dynamodb:Query',
        Resource: PETS_INDEXES.map((index) => index.name)
          .sort()
          .map((index) => ({ 'Fn::Join': ['', [table, `/index/${index}`]] })),
      };
    case 'get':
      return { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: table };
    case 'put':
      return { Effect: 'Allow', Action: 'dynamodb:PutItem', Resource: table };
  }
}

function functionResource(stage: SynthesizedStage, fn: { readonly function: IConstruct }) {
  return stage.json.Resources[logicalId(stage, fn.function)]!;
}

describe.each(stages)('the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesis.stage(config.name);
  });

  describe('data', () => {
    it('keys every table exactly as the shared key designs and the local tables do, indexes included', () => {
      const [pets, apiKeys, idempotency] = tableDefinitions({ pets: 'pets', apiKeys: 'api-keys', idempotency: 'idempotency' });
      for (const [table, local] of [
        [stage.stack.petsTable.table, pets!],
        [stage.stack.apiKeysTable.table, apiKeys!],
        [stage.stack.idempotencyTable.table, idempotency!],
      ] as const) {
        const properties = stage.json.Resources[logicalId(stage, table)]!.Properties!;
        const byName = (a: { AttributeName?: string; IndexName?: string }, b: typeof a) =>
          (a.AttributeName ?? a.IndexName ?? '').localeCompare(b.AttributeName ?? b.IndexName ?? '');
        expect(properties.KeySchema).toEqual(local.KeySchema);
        expect([...properties.AttributeDefinitions].sort(byName)).toEqual([...local.AttributeDefinitions!].sort(byName));
        expect([...(properties.GlobalSecondaryIndexes ?? [])].sort(byName)).toEqual([...(local.GlobalSecondaryIndexes ?? [])].sort(byName));
        expect(properties.BillingMode).toBe('PAY_PER_REQUEST');
      }
    });

    it('keeps point-in-time recovery on the pets and API keys tables', () => {
      for (const table of [stage.stack.petsTable.table, stage.stack.apiKeysTable.table]) {
        expect(stage.json.Resources[logicalId(stage, table)]!.Properties!.Replicas).toEqual([
          expect.objectContaining({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } }),
        ]);
      }
    });

    it('expires idempotency records with DynamoDB TTL on the attribute the store writes, and deletes the table with the stack', () => {
      const resource = stage.json.Resources[logicalId(stage, stage.stack.idempotencyTable.table)]!;
      expect(resource.Properties!.TimeToLiveSpecification).toEqual({ AttributeName: IDEMPOTENCY_TABLE.expiryAttribute, Enabled: true });
      expect(resource.DeletionPolicy).toBe('Delete');
    });

    it('leaves nothing behind when its first create rolls back: no resource is kept unconditionally', () => {
      const retained = Object.entries(stage.json.Resources).filter(([, resource]) => resource.DeletionPolicy === 'Retain');
      expect(retained.map(([id]) => id)).toEqual([]);
    });
  });

  describe('API', () => {
    it("routes every operation of the route table through the authorizer to its own function's live alias", () => {
      const authorizerId = logicalId(stage, stage.stack.api.httpApi.node.findChild('ApiKeyAuthorizer'));
      for (const route of routes) {
        const fn = stage.stack.functions.of(route.operationId);
        const [integrationId] = Object.entries(
          stage.template.findResources('AWS::ApiGatewayV2::Integration', {
            Properties: { IntegrationUri: ref(stage, fn.alias) },
          }),
        ).map(([id]) => id);
        expect(integrationId, route.operationId).toBeDefined();
        stage.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
          RouteKey: routeKey(route),
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
          Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] },
        });
      }
    });

    it('answers every unmatched request with the routeNotFound function, behind the authorizer too', () => {
      const authorizerId = logicalId(stage, stage.stack.api.httpApi.node.findChild('ApiKeyAuthorizer'));
      const integrations = stage.template.findResources('AWS::ApiGatewayV2::Integration', {
        Properties: { IntegrationUri: ref(stage, stage.stack.functions.of('routeNotFound').alias) },
      });
      expect(Object.keys(integrations)).toHaveLength(1);
      stage.template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
        RouteKey: '$default',
        AuthorizationType: 'CUSTOM',
        AuthorizerId: { Ref: authorizerId },
        Target: { 'Fn::Join': ['', ['integrations/', { Ref: Object.keys(integrations)[0] }]] },
      });
    });

    it('has no route but those of the route table and $default', () => {
      const keys = Object.values(stage.template.findResources('AWS::ApiGatewayV2::Route')).map((r) => r.Properties.RouteKey);
      expect(keys.sort()).toEqual([...routes.map(routeKey), '$default'].sort());
    });

    it('asks the authorizer about every request: no identity source, no result cache, simple responses, payload 2.0', () => {
      const authorizers = stage.template.findResources('AWS::ApiGatewayV2::Authorizer');
      expect(Object.values(authorizers)).toHaveLength(1);
      const [properties] = Object.values(authorizers).map((a) => a.Properties);
      expect(properties).toEqual(
        expect.objectContaining({
          AuthorizerType: 'REQUEST',
          AuthorizerPayloadFormatVersion: '2.0',
          EnableSimpleResponses: true,
          AuthorizerResultTtlInSeconds: 0,
        }),
      );
      // With an identity source, a request without it would get API Gateway's 401, not our Error body.
      expect(properties).not.toHaveProperty('IdentitySource');
      expect(JSON.stringify(properties.AuthorizerUri)).toContain(logicalId(stage, stage.stack.functions.of('authorizer').alias));
    });

    it('lets API Gateway invoke the live alias of the authorizer and of each route function, and never the latest code', () => {
      for (const fn of functionsOf(stage).values()) {
        stage.template.hasResourceProperties('AWS::Lambda::Permission', {
          Action: 'lambda:InvokeFunction',
          Principal: 'apigateway.amazonaws.com',
          FunctionName: ref(stage, fn.alias),
        });
      }
      const permissions = Object.values(stage.template.findResources('AWS::Lambda::Permission'));
      for (const permission of permissions) expect(JSON.stringify(permission.Properties.FunctionName)).toContain('Live');
    });

    it('hands requests to the functions in payload format 2.0', () => {
      const integrations = Object.values(stage.template.findResources('AWS::ApiGatewayV2::Integration'));
      expect(integrations).toHaveLength(routes.length + 1);
      for (const integration of integrations) {
        expect(integration.Properties).toEqual(expect.objectContaining({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' }));
      }
    });

    it('serves the $default stage, every route throttled by its own share, so the API as a whole admits at most the stated cap', () => {
      stage.template.resourceCountIs('AWS::ApiGatewayV2::Stage', 1);
      const [apiStage] = Object.values(stage.template.findResources('AWS::ApiGatewayV2::Stage'));
      expect(apiStage!.Properties).toEqual(expect.objectContaining({ StageName: '$default', AutoDeploy: true }));
      const routeKeys = Object.values(stage.template.findResources('AWS::ApiGatewayV2::Route')).map((route) => route.Properties.RouteKey);
      const settings: Record<string, { ThrottlingRateLimit: number; ThrottlingBurstLimit: number }> = apiStage!.Properties.RouteSettings;
      expect(Object.keys(settings).sort()).toEqual([...routeKeys].sort());
      const sum = (field: 'ThrottlingRateLimit' | 'ThrottlingBurstLimit') =>
        Object.values(settings).reduce((total, setting) => total + setting[field], 0);
      expect({ rateLimit: sum('ThrottlingRateLimit'), burstLimit: sum('ThrottlingBurstLimit') }).toEqual(apiThrottle(config));
    });

    it('creates the stage after its routes, since API Gateway refuses settings for a route it does not know', () => {
      const [apiStage] = Object.values(stage.template.findResources('AWS::ApiGatewayV2::Stage'));
      const routeIds = Object.keys(stage.template.findResources('AWS::ApiGatewayV2::Route'));
      expect(apiStage!.DependsOn).toEqual(expect.arrayContaining(routeIds));
    });

    it('writes a JSON access log of what happened to each request (id, key, route, status, latency, verdict, error), kept as long as the stage says', () => {
      const [apiStage] = Object.values(stage.template.findResources('AWS::ApiGatewayV2::Stage'));
      const { DestinationArn, Format } = apiStage!.Properties.AccessLogSettings;
      expect(DestinationArn).toEqual(arnOf(stage, stage.stack.api.accessLogs));
      expect(JSON.parse(Format)).toEqual(
        expect.objectContaining({
          requestId: '$context.requestId',
          keyId: '$context.authorizer.keyId',
          routeKey: '$context.routeKey',
          status: '$context.status',
          responseLatency: '$context.responseLatency',
          authorizerOutcome: '$context.authorizer.outcome',
          authorizerError: '$context.authorizer.error',
          integrationError: '$context.integrationErrorMessage',
          error: '$context.error.message',
        }),
      );
      const logGroup = stage.json.Resources[logicalId(stage, stage.stack.api.accessLogs)]!;
      expect(logGroup.Properties!.RetentionInDays).toBe(config.logRetention);
    });

    it('sends no CORS headers when no browser origin is configured', () => {
      expect(config.cors.allowOrigins).toEqual([]);
      stage.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { CorsConfiguration: Match.absent() });
    });

    it('outputs the names the key CLI needs (the base URL: see each stage below)', () => {
      const outputs = stage.json.Outputs!;
      expect(outputs.ApiKeysTableName!.Value).toEqual(ref(stage, stage.stack.apiKeysTable.table));
      expect(outputs.PetsTableName!.Value).toEqual(ref(stage, stage.stack.petsTable.table));
      expect(outputs.Region!.Value).toBe(config.region);
      expect(outputs.KeyAdministrationPolicyArn!.Value).toEqual(ref(stage, stage.stack.keyAdministrationPolicy));
    });
  });

  describe('functions', () => {
    it('has one function per route, routeNotFound and the authorizer, the pre-traffic hook, the deployment traffic and the synthetic probe', () => {
      stage.template.resourceCountIs('AWS::Lambda::Function', routes.length + 5);
      expect(functionResource(stage, stage.stack.preTrafficChecks).Type).toBe('AWS::Lambda::Function');
      expect(functionResource(stage, stage.stack.deploymentTraffic).Type).toBe('AWS::Lambda::Function');
    });

    it('runs every function on Node.js 24, arm64, from index.handler, without loading its source map at cold start', () => {
      for (const [name, fn] of functionsOf(stage)) {
        const properties = functionResource(stage, fn).Properties!;
        expect(properties, name).toEqual(
          expect.objectContaining({ Runtime: 'nodejs24.x', Architectures: ['arm64'], Handler: 'index.handler' }),
        );
        expect(properties.Environment.Variables.NODE_OPTIONS).toBeUndefined();
      }
    });

    it('times functions out after the SDK gives up and before API Gateway does', () => {
      for (const fn of functionsOf(stage).values()) {
        const timeoutMs = functionResource(stage, fn).Properties!.Timeout * 1000;
        expect(dynamoDbCallBudgetMs()).toBeLessThan(timeoutMs);
        expect(timeoutMs).toBeLessThanOrEqual(API_GATEWAY_AUTHORIZER_TIMEOUT_MS);
        expect(timeoutMs).toBeLessThan(API_GATEWAY_INTEGRATION_TIMEOUT_MS);
      }
    });

    it('gives each function the memory the stage chose for it, and every function its log level and log retention', () => {
      for (const [name, fn] of stage.stack.functions.byName)
        expect(functionResource(stage, fn).Properties!.MemorySize, name).toBe(config.memoryMiB[name]);
      for (const fn of functionsOf(stage).values()) {
        const properties = functionResource(stage, fn).Properties!;
        expect(properties.Environment.Variables.POWERTOOLS_LOG_LEVEL).toBe(config.logLevel);
        expect(properties.LoggingConfig.LogGroup).toEqual(ref(stage, fn.logGroup));
        expect(stage.json.Resources[logicalId(stage, fn.logGroup)]!.Properties!.RetentionInDays).toBe(config.logRetention);
      }
    });

    it('hands each function the table names it reads at cold start, and nothing else', () => {
      const pets = ref(stage, stage.stack.petsTable.table);
      const keys = ref(stage, stage.stack.apiKeysTable.table);
      const variables = (name: string) => {
        const { POWERTOOLS_SERVICE_NAME, POWERTOOLS_LOG_LEVEL, POWERTOOLS_METRICS_NAMESPACE, NODE_OPTIONS, ...own } = functionResource(
          stage,
          functionsOf(stage).get(name)!,
        ).Properties!.Environment.Variables;
        return own;
      };
      // The listing as the local stage runs it: the same shards, written and read.
      const local = localStageVariables('unused');
      expect(variables('listPets')).toEqual({
        PETS_TABLE_NAME: pets,
        CURSOR_SECRET: expect.anything(),
        PETS_LISTING_SHARDS: local[ENV.listingShards],
      });
      expect(variables('createPet')).toEqual({
        PETS_TABLE_NAME: pets,
        IDEMPOTENCY_TABLE_NAME: ref(stage, stage.stack.idempotencyTable.table),
        PETS_WRITE_SHARDS: local[ENV.writeShards],
      });
      expect(variables('getPet')).toEqual({ PETS_TABLE_NAME: pets });
      expect(variables('authorizer')).toEqual({ API_KEYS_TABLE_NAME: keys });
      expect(variables('routeNotFound')).toEqual({});
    });

    it("hands the list function the stage's generated cursor secret as a dynamic reference", () => {
      // The other secret holds the synthetic probe's API key, which an operator stores.
      const secrets = stage.template.findResources('AWS::SecretsManager::Secret', {
        Properties: { GenerateSecretString: Match.anyValue() },
      });
      expect(Object.keys(secrets)).toHaveLength(1);
      const [secretId] = Object.keys(secrets);
      expect(secrets[secretId!]!.Properties.GenerateSecretString).toEqual(expect.objectContaining({ PasswordLength: 64 }));
      const cursorSecret = functionResource(stage, functionsOf(stage).get('listPets')!).Properties!.Environment.Variables.CURSOR_SECRET;
      expect(cursorSecret).toEqual({
        'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']],
      });
    });
  });

  describe('permissions', () => {
    it('lets the function of no GET route change the pets table: reading is all a safe method may do', () => {
      const reads = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan'];
      const pets = logicalId(stage, stage.stack.petsTable.table);
      const safe = routes.filter((route) => route.method === 'GET');
      expect(safe.length).toBeGreaterThan(0);
      for (const route of safe) {
        const fn = stage.stack.functions.of(route.operationId);
        const onPets = dynamoDbStatementsOf(stage, fn).filter((statement) => JSON.stringify(statement).includes(pets));
        const actions = grantsOf(onPets).map((grant) => grant.split(' ')[0]!);
        expect(actions.length, route.operationId).toBeGreaterThan(0);
        for (const action of actions) expect(reads, `${route.operationId} may ${action}`).toContain(action);
      }
    });

    it("lets the list function only query the pets table's indexes: it can neither write nor read items by key", () => {
      const statements = dynamoDbStatementsOf(stage, functionsOf(stage).get('listPets')!);
      expect(statements).toEqual([petsStatement(stage, 'query')]);
    });

    it('lets the create function put pets, read one back by its key, and keep its idempotency records', () => {
      expect(grantsOf(dynamoDbStatementsOf(stage, functionsOf(stage).get('createPet')!))).toEqual(
        grantsOf([petsStatement(stage, 'put'), petsStatement(stage, 'get'), idempotencyStatement(stage)]),
      );
    });

    it('lets nobody but the create function touch the idempotency table', () => {
      const table = logicalId(stage, stage.stack.idempotencyTable.table);
      for (const [name, fn] of functionsOf(stage)) {
        if (name === 'createPet') continue;
        expect(JSON.stringify(statementsOf(stage, fn)), name).not.toContain(table);
      }
    });

    it('lets the get function only read one pet by its key', () => {
      expect(dynamoDbStatementsOf(stage, functionsOf(stage).get('getPet')!)).toEqual([petsStatement(stage, 'get')]);
    });

    it('lets the authorizer only look one API key up, and nothing touch the pets table', () => {
      expect(dynamoDbStatementsOf(stage, stage.stack.functions.of('authorizer'))).toEqual([
        { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: arnOf(stage, stage.stack.apiKeysTable.table) },
      ]);
    });

    it('lets nobody but the authorizer read the API keys table', () => {
      const keysTable = logicalId(stage, stage.stack.apiKeysTable.table);
      for (const [name, fn] of functionsOf(stage)) {
        if (fn === stage.stack.functions.of('authorizer')) continue;
        expect(JSON.stringify(statementsOf(stage, fn)), name).not.toContain(keysTable);
      }
    });

    it('gives the routeNotFound function no DynamoDB access at all', () => {
      expect(dynamoDbStatementsOf(stage, stage.stack.functions.of('routeNotFound'))).toEqual([]);
    });

    it('lets each function write only to its own log group', () => {
      for (const [name, fn] of functionsOf(stage)) {
        const logStatements = statementsOf(stage, fn).filter((statement) => JSON.stringify(statement).includes('logs:'));
        expect(logStatements, name).toEqual([
          { Effect: 'Allow', Action: ['logs:CreateLogStream', 'logs:PutLogEvents'], Resource: arnOf(stage, fn.logGroup) },
        ]);
      }
    });

    it("grants no function role anything beyond its statements, and CodeDeploy's role only AWS's policy and its hooks", () => {
      const hook = stage.stack.preTrafficChecks;
      const bake = stage.stack.deploymentTraffic;
      const probe = stage.stack.syntheticProbe;
      // The probe's own roles are held to exactly their statements by test/infra/scheduled-probe.test.ts.
      const probeRoles = [probe, { role: probe.schedulerRole }];
      const owners = [...functionsOf(stage).values(), hook, bake, ...probeRoles];
      const functionRoles = new Set(owners.map((owner) => logicalId(stage, owner.role)));
      const codeDeployRoles: string[] = [];
      for (const [id, role] of Object.entries(stage.template.findResources('AWS::IAM::Role'))) {
        expect(role.Properties.Policies, id).toBeUndefined();
        if (functionRoles.has(id)) {
          expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
        } else {
          codeDeployRoles.push(id);
          expect(role.Properties.AssumeRolePolicyDocument.Statement, id).toEqual([
            expect.objectContaining({ Principal: { Service: 'codedeploy.amazonaws.com' } }),
          ]);
          expect(JSON.stringify(role.Properties.ManagedPolicyArns), id).toMatch(
            /^\[\{"Fn::Join":\["",\["arn:",\{"Ref":"AWS::Partition"\},":iam::aws:policy\/service-role\/AWSCodeDeployRoleForLambdaLimited"\]\]\}\]$/,
          );
        }
      }
      // CDK's grant for a deployment hook: CodeDeploy may invoke each hook, the one before traffic and the bake, by name or qualified.
      const namesOf = (fn: IConstruct) => [arnOf(stage, fn), { 'Fn::Join': ['', [arnOf(stage, fn), ':*']] }];
      const codeDeployStatements = codeDeployRoles.flatMap((id) => statementsOfRole(stage.json, id));
      expect(codeDeployStatements).toEqual([
        {
          Effect: 'Allow',
          Action: 'lambda:InvokeFunction',
          Resource: expect.arrayContaining([...namesOf(hook.function), ...namesOf(bake.function)]),
        },
      ]);
      expect((codeDeployStatements[0] as { Resource: unknown[] }).Resource).toHaveLength(4);
      const granted = owners.flatMap((owner) => statementsOf(stage, owner));
      const all = Object.values(stage.template.findResources('AWS::IAM::Policy')).flatMap(
        (policy) => policy.Properties.PolicyDocument.Statement,
      );
      expect(all).toHaveLength(granted.length + codeDeployStatements.length);
    });
  });

  describe('alarms', () => {
    it("alarms on the API's 5xx rate at the stage's threshold", () => {
      stage.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Threshold: config.alarms.serverErrorRatePercent,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        Metrics: Match.arrayWith([
          Match.objectLike({ Expression: '100 * FILL(errors, 0) / requests' }),
          Match.objectLike({ Id: 'errors', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: '5xx' }) }) }),
          Match.objectLike({ Id: 'requests', MetricStat: Match.objectLike({ Metric: Match.objectLike({ MetricName: 'Count' }) }) }),
        ]),
      });
    });

    it("alarms on every function's errors and throttles", () => {
      for (const [name, fn] of functionsOf(stage)) {
        for (const [metricName, threshold] of [
          ['Errors', config.alarms.functionErrors],
          ['Throttles', config.alarms.functionThrottles],
        ] as const) {
          const alarms = stage.template.findResources('AWS::CloudWatch::Alarm', {
            Properties: {
              MetricName: metricName,
              Namespace: 'AWS/Lambda',
              Threshold: threshold,
              Dimensions: [{ Name: 'FunctionName', Value: ref(stage, fn.function) }],
            },
          });
          expect(Object.keys(alarms), `${name} ${metricName}`).toHaveLength(1);
        }
      }
    });

    it('alarms on throttled requests on every table', () => {
      for (const table of [stage.stack.petsTable.table, stage.stack.apiKeysTable.table]) {
        const alarms = Object.values(stage.template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) =>
          (alarm.Properties.Metrics ?? []).some(
            (metric: any) =>
              metric.MetricStat?.Metric.MetricName === 'ThrottledRequests' &&
              JSON.stringify(metric.MetricStat.Metric.Dimensions).includes(logicalId(stage, table)),
          ),
        );
        expect(alarms).toHaveLength(1);
        expect(alarms[0]!.Properties.Threshold).toBe(config.alarms.dynamoDbThrottledRequests);
      }
    });
  });

  describe('isolation', () => {
    it('names no resource but by its stack name, so two stages can live in one account and region', () => {
      // Names that must be unique per account and region; a reference to another resource is fine.
      const nameProperties: Record<string, string> = {
        'AWS::DynamoDB::GlobalTable': 'TableName',
        'AWS::Lambda::Function': 'FunctionName',
        'AWS::IAM::Role': 'RoleName',
        'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
        'AWS::Logs::LogGroup': 'LogGroupName',
        'AWS::CloudWatch::Alarm': 'AlarmName',
        'AWS::CloudWatch::Dashboard': 'DashboardName',
        'AWS::SecretsManager::Secret': 'Name',
        'AWS::SNS::Topic': 'TopicName',
        'AWS::CodeDeploy::Application': 'ApplicationName',
      };
      for (const [type, property] of Object.entries(nameProperties)) {
        const resources = Object.entries(stage.template.findResources(type));
        expect(resources.length, type).toBeGreaterThan(0);
        for (const [id, resource] of resources) {
          const name = resource.Properties?.[property];
          // Literal, or joined from literals and intrinsics (the access log's suffix from the stack id).
          if (name !== undefined) expect(JSON.stringify(name), id).toContain(config.stackName);
        }
      }
    });

    it('shares nothing with another stack: no imports, no exports', () => {
      expect(JSON.stringify(stage.json)).not.toContain('Fn::ImportValue');
      for (const output of Object.values(stage.json.Outputs ?? {})) expect(output).not.toHaveProperty('Export');
    });
  });
});

describe('production', () => {
  it('protects the pets and API keys tables from deletion and keeps them when they leave the stack, except after a failed create', () => {
    const stage = synthesis.stage(production.name);
    const tables = [stage.stack.petsTable.table, stage.stack.apiKeysTable.table].map(
      (table) => stage.json.Resources[logicalId(stage, table)]!,
    );
    for (const table of tables) {
      expect(table.DeletionPolicy).toBe('RetainExceptOnCreate');
      expect(table.UpdateReplacePolicy).toBe('Retain');
      expect(table.Properties!.Replicas).toEqual([expect.objectContaining({ DeletionProtectionEnabled: true })]);
    }
  });

  it('cannot be destroyed by accident: the stack has termination protection', () => {
    expect(synthesis.assembly.getStackByName(production.stackName).terminationProtection).toBe(true);
  });

  it('serves the API at its custom domain only: the BaseUrl output and the probe use it, and execute-api is off', () => {
    const stage = synthesis.stage(production.name);
    const baseUrl = `https://${production.domain!.domainName}/v1`;
    expect(stage.json.Outputs!.BaseUrl!.Value).toBe(baseUrl);
    const probe = stage.json.Resources[logicalId(stage, stage.stack.syntheticProbe.function)]!;
    expect(probe.Properties!.Environment.Variables[ENV.probeBaseUrl]).toBe(baseUrl);
    stage.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
    stage.template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', {
      DomainName: production.domain!.domainName,
      DomainNameConfigurations: [Match.objectLike({ EndpointType: 'REGIONAL', SecurityPolicy: 'TLS_1_2' })],
    });
    stage.template.hasResourceProperties('AWS::ApiGatewayV2::ApiMapping', {
      ApiId: ref(stage, stage.stack.api.httpApi),
      Stage: '$default',
    });
  });

  it('validates its certificate and adds its alias record in the configured hosted zone, and outputs the DNS target', () => {
    const stage = synthesis.stage(production.name);
    const zoneId = production.domain!.hostedZone!.hostedZoneId;
    stage.template.hasResourceProperties('AWS::CertificateManager::Certificate', {
      ValidationMethod: 'DNS',
      DomainValidationOptions: [{ DomainName: production.domain!.domainName, HostedZoneId: zoneId }],
    });
    stage.template.hasResourceProperties('AWS::Route53::RecordSet', { HostedZoneId: zoneId, Type: 'A' });
    const domain = logicalId(stage, stage.stack.api.domain!.domainName);
    expect(stage.json.Outputs!.DomainTarget!.Value).toEqual({ 'Fn::GetAtt': [domain, 'RegionalDomainName'] });
    expect(stage.json.Outputs!.DomainTargetHostedZoneId!.Value).toEqual({ 'Fn::GetAtt': [domain, 'RegionalHostedZoneId'] });
  });

  it('keeps its tables of record, secrets and logs on update and delete, and only those, but not after a failed create', () => {
    const stage = synthesis.stage(production.name);
    const { stack, json } = stage;
    // Every log group and secret, those CDK's own constructs add included, and the tables that hold data.
    const stateful = [
      ...Object.keys(resourcesOfType(json, 'AWS::Logs::LogGroup')),
      ...Object.keys(resourcesOfType(json, 'AWS::SecretsManager::Secret')),
      logicalId(stage, stack.petsTable.table),
      logicalId(stage, stack.apiKeysTable.table),
    ];
    const cursorSecret = (json.Outputs!.CursorSecretArn!.Value as { Ref: string }).Ref;
    const logGroups = [...stack.functions.all.map((fn) => fn.logGroup), stack.api.accessLogs, stack.preTrafficChecks.logGroup];
    expect(stateful).toEqual(
      expect.arrayContaining([
        cursorSecret,
        logicalId(stage, stack.syntheticProbe.apiKeySecret),
        logicalId(stage, stack.syntheticProbe.logGroup),
        ...logGroups.map((logGroup) => logicalId(stage, logGroup)),
      ]),
    );
    for (const id of stateful) {
      expect(json.Resources[id], id).toMatchObject({ DeletionPolicy: 'RetainExceptOnCreate', UpdateReplacePolicy: 'Retain' });
    }
    const kept = Object.keys(json.Resources).filter((id) => (json.Resources[id]!.DeletionPolicy ?? 'Delete') !== 'Delete');
    expect(kept.sort()).toEqual([...stateful].sort());
  });
});

describe('staging', () => {
  it('has no custom domain: clients and the probe call the execute-api URL of its API, which stays on', () => {
    const stage = synthesis.stage(staging.name);
    const baseUrl = stage.json.Outputs!.BaseUrl!.Value as { 'Fn::Join': [string, unknown[]] };
    expect(baseUrl['Fn::Join'][1].at(-1)).toMatch(/\/v1$/);
    expect(JSON.stringify(baseUrl)).toContain('.execute-api.');
    expect(JSON.stringify(baseUrl)).toContain(logicalId(stage, stage.stack.api.httpApi));
    const probe = stage.json.Resources[logicalId(stage, stage.stack.syntheticProbe.function)]!;
    expect(probe.Properties!.Environment.Variables[ENV.probeBaseUrl]).toEqual(baseUrl);
    stage.template.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: false });
    for (const type of ['AWS::ApiGatewayV2::DomainName', 'AWS::CertificateManager::Certificate', 'AWS::Route53::RecordSet']) {
      stage.template.resourceCountIs(type, 0);
    }
    expect(stage.json.Outputs).not.toHaveProperty('DomainTarget');
  });

  it('can be torn down: no protection, everything deleted with the stack', () => {
    expect(synthesis.assembly.getStackByName(staging.stackName).terminationProtection).toBe(false);
    const { template } = synthesis.stage(staging.name);
    for (const table of Object.values(template.findResources('AWS::DynamoDB::GlobalTable'))) {
      expect(table).toMatchObject({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
      expect(table.Properties.Replicas).toEqual([expect.objectContaining({ DeletionProtectionEnabled: false })]);
    }
    for (const type of ['AWS::Logs::LogGroup', 'AWS::SecretsManager::Secret']) {
      const resources = Object.values(template.findResources(type));
      expect(resources, type).not.toEqual([]);
      for (const resource of resources) expect(resource).toMatchObject({ DeletionPolicy: 'Delete', UpdateReplacePolicy: 'Delete' });
    }
  });
});
