import { PETS_INDEXES } from '../helpers/pets-indexes';
import { App, Duration, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import { LambdaDeploymentConfig, LambdaDeploymentGroup } from 'aws-cdk-lib/aws-codedeploy';
import { Rule, Schedule as RuleSchedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { Alias, Code, Function as LambdaFn, Runtime } from 'aws-cdk-lib/aws-lambda';
import { Schedule, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staging, stages, type StageConfig } from '../../infra/stages';
import { routeKey, routes } from '../../shared/facts/routes';
import { FUNCTION_CATALOG, type FunctionEntry, type TableName } from '../../shared/catalog/function-catalog';
import { API_FUNCTIONS } from '../../shared/facts/function-names';
import {
  endpointsOf,
  findingsOf,
  formatEdges,
  permissionGraph,
  type DeploymentTarget,
  type Edge,
  type EdgeKind,
  type PermissionGraph,
} from '../helpers/permission-graph';
import { resourcesOfType, synthesize, type CfnTemplate, type Synthesis, type SynthesizedStage } from '../../tools/lambda/synth';
import { synthesizedApp, type SharedSynthesis } from '../helpers/synthesized-app';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';

let synthesis: SharedSynthesis;
beforeAll(() => {
  synthesis = synthesizedApp();
});

function targetOf(config: StageConfig): DeploymentTarget {
  return { account: config.account, region: config.region, stackName: config.stackName };
}

function logicalId(stage: SynthesizedStage, construct: IConstruct): string {
  return stage.stack.getLogicalId(construct.node.defaultChild as CfnElement);
}

function edgesOfKind(graph: PermissionGraph, kind: EdgeKind): Edge[] {
  return graph.edges.filter((edge) => edge.kind === kind);
}

describe.each(stages)('the permission graph of the $name stage', (config: StageConfig) => {
  let stage: SynthesizedStage;
  let graph: PermissionGraph;
  beforeAll(() => {
    stage = synthesis.stage(config.name);
    graph = permissionGraph(stage.json, targetOf(config));
  });

  it('grants every call one service makes to another, by the right resource policy or role, and no more than each function uses', () => {
    expect(findingsOf(graph), formatEdges(graph)).toEqual([]);
  });

  it('lets API Gateway invoke the live alias behind every route and the authorizer, scoped to the API', () => {
    const apiEdges = edgesOfKind(graph, 'API Gateway → Lambda');
    const { functions } = stage.stack;
    const expected = [
      ...routes.map((route) => [routeKey(route), logicalId(stage, functions.of(route.operationId).alias)]),
      ['$default', logicalId(stage, functions.of('routeNotFound').alias)],
      ['authorizer ApiKeyAuthorizer', logicalId(stage, functions.of('authorizer').alias)],
    ];
    expect(apiEdges.map((edge) => [edge.detail, edge.to.id]).sort()).toEqual(expected.sort());
    for (const edge of apiEdges) expect(edge.from.id).toBe(logicalId(stage, stage.stack.api.httpApi));
  });

  it('lets every alarm of the template notify the stage topic', () => {
    const topic = logicalId(stage, stage.stack.monitoring.topic);
    const alarms = Object.keys(resourcesOfType(stage.json, 'AWS::CloudWatch::Alarm'));
    expect(alarms.length).toBeGreaterThanOrEqual(stage.stack.monitoring.alarms.length);
    const notifying = edgesOfKind(graph, 'CloudWatch alarm → SNS topic').filter((edge) => edge.to.id === topic);
    expect(notifying.map((edge) => edge.from.id).sort()).toEqual(alarms.sort());
  });

  it('lets CodeDeploy read the rollback alarms of every deployment group and move every alias', () => {
    const aliases = Object.keys(resourcesOfType(stage.json, 'AWS::Lambda::Alias'));
    expect(aliases.length).toBeGreaterThan(0);
    expect(
      edgesOfKind(graph, 'CodeDeploy → alias')
        .map((edge) => edge.to.id)
        .sort(),
    ).toEqual(aliases.sort());
    const watched = edgesOfKind(graph, 'CodeDeploy → alarm');
    for (const [name, group] of stage.stack.trafficShifting.deploymentGroups) {
      const expected = stage.stack.versionAlarms.byFunction.get(name)!.map((alarm) => logicalId(stage, alarm));
      const found = watched.filter((edge) => edge.from.id === logicalId(stage, group)).map((edge) => edge.to.id);
      expect(found.sort(), name).toEqual(expected.sort());
    }
  });

  it("visits every alarm, every alias and every function's role, and finds each kind of edge the stage has", () => {
    const endpoints = endpointsOf(graph);
    const roles = Object.values(resourcesOfType(stage.json, 'AWS::Lambda::Function')).map(
      (fn) => (fn.Properties!.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
    );
    const required = [
      ...Object.keys(resourcesOfType(stage.json, 'AWS::CloudWatch::Alarm')),
      ...Object.keys(resourcesOfType(stage.json, 'AWS::Lambda::Alias')),
      ...roles,
    ];
    expect(required.length).toBeGreaterThan(roles.length);
    expect(required.filter((id) => !endpoints.has(id))).toEqual([]);
    expect([...new Set(graph.edges.map((edge) => edge.kind))]).toEqual(
      expect.arrayContaining([
        'API Gateway → Lambda',
        'CloudWatch alarm → SNS topic',
        'CodeDeploy → alarm',
        'CodeDeploy → alias',
        'function → function',
        'function → table',
        'function → secret',
        'function → log group',
      ]),
    );
  });

  it('lets the pre-traffic hook invoke every function it checks and the deployment traffic, and that traffic each live alias, and nothing else', () => {
    const invokes = (role: IConstruct) =>
      edgesOfKind(graph, 'function → function')
        .filter((edge) => edge.from.id === logicalId(stage, role))
        .map((edge) => [edge.to.id, edge.detail] as const)
        .sort();
    const api = stage.stack.functions.all.map((fn) => logicalId(stage, fn.function));
    const traffic = logicalId(stage, stage.stack.deploymentTraffic.function);
    expect(invokes(stage.stack.preTrafficChecks.role)).toEqual(
      // `<function>:*`, the only grant that covers a version published during the deployment, covers the alias too.
      [
        ...api.map((id) => [id, 'lambda:InvokeFunction on its live alias, its versions'] as const),
        [traffic, 'lambda:InvokeFunction on unqualified'] as const,
      ].sort(),
    );
    expect(invokes(stage.stack.deploymentTraffic.role)).toEqual(
      api.map((id) => [id, 'lambda:InvokeFunction on its live alias'] as const).sort(),
    );
    const others = edgesOfKind(graph, 'function → function').filter(
      (edge) =>
        ![stage.stack.preTrafficChecks.role, stage.stack.deploymentTraffic.role].some((role) => edge.from.id === logicalId(stage, role)),
    );
    expect(others).toEqual([]);
  });

  it('has each function read exactly the tables its environment names, and the cursor secret only through CloudFormation', () => {
    const { functions } = stage.stack;
    const tablesOf = (role: string) =>
      edgesOfKind(graph, 'function → table')
        .filter((edge) => edge.from.id === role)
        .map((edge) => edge.to.id)
        .sort();
    const tables = {
      pets: stage.stack.petsTable.table,
      apiKeys: stage.stack.apiKeysTable.table,
      idempotency: stage.stack.idempotencyTable.table,
    } satisfies Record<TableName, IConstruct>;
    for (const name of API_FUNCTIONS) {
      const used = Object.keys(FUNCTION_CATALOG[name].tables) as TableName[];
      expect(tablesOf(logicalId(stage, functions.of(name).role)), name).toEqual(
        used.map((table) => logicalId(stage, tables[table])).sort(),
      );
    }
    // The pre-traffic hook issues the authorizer's check key and revokes it: writes, and to the keys table only.
    const hookRole = logicalId(stage, stage.stack.preTrafficChecks.role);
    expect(tablesOf(hookRole)).toEqual([logicalId(stage, stage.stack.apiKeysTable.table)]);
    expect(edgesOfKind(graph, 'function → table').find((edge) => edge.from.id === hookRole)?.detail).toBe(
      'dynamodb:PutItem, dynamodb:UpdateItem on the table',
    );
    expect(edgesOfKind(graph, 'function → secret').map((edge) => [edge.from.id, edge.detail])).toEqual([
      [logicalId(stage, functions.of('listPets').role), 'resolved by CloudFormation at deploy time'],
      [logicalId(stage, stage.stack.syntheticProbe.role), 'secretsmanager:GetSecretValue at run time'],
    ]);
  });
});

describe('the permission graph of a template with a grant taken away or widened', () => {
  let stage: SynthesizedStage;
  beforeAll(() => {
    stage = synthesis.stage(staging.name);
  });
  /** Every alarm of the stage: the monitoring's and the synthetic probe's, each with the topic as its action. */
  const alarmCount = () => Object.keys(stage.template.findResources('AWS::CloudWatch::Alarm')).length;

  /** The findings on a copy of the staging template changed by `change`. */
  function findingsAfter(change: (json: CfnTemplate) => void): string[] {
    const json = structuredClone(stage.json);
    change(json);
    return findingsOf(permissionGraph(json, targetOf(staging)));
  }

  function resource(json: CfnTemplate, construct: IConstruct) {
    return json.Resources[logicalId(stage, construct)]!;
  }

  function policyOf(json: CfnTemplate, roleConstruct: IConstruct) {
    const role = logicalId(stage, roleConstruct);
    return Object.values(resourcesOfType(json, 'AWS::IAM::Policy')).find((policy) =>
      JSON.stringify(policy.Properties!.Roles).includes(role),
    )!;
  }

  it('reports every alarm when the topic policy is the one enforceSSL alone writes', () => {
    const findings = findingsAfter((json) => {
      const [policy] = Object.values(resourcesOfType(json, 'AWS::SNS::TopicPolicy'));
      const document = policy!.Properties!.PolicyDocument;
      document.Statement = document.Statement.filter((statement: { Effect: string }) => statement.Effect === 'Deny');
    });
    expect(findings).toHaveLength(alarmCount());
    for (const finding of findings) {
      expect(finding).toMatch(
        /^CloudWatch alarm → SNS topic: [\w/]+ → Monitoring\/AlarmTopic .*does not let cloudwatch\.amazonaws\.com publish/,
      );
    }
  });

  it("reports a topic policy that would let another account's alarms publish", () => {
    const findings = findingsAfter((json) => {
      const [policy] = Object.values(resourcesOfType(json, 'AWS::SNS::TopicPolicy'));
      for (const statement of policy!.Properties!.PolicyDocument.Statement) if (statement.Effect === 'Allow') delete statement.Condition;
    });
    expect(findings).toHaveLength(alarmCount());
    for (const finding of findings) expect(finding).toMatch(/another account's alarms could publish/);
  });

  it('reports the authorizer when API Gateway may no longer invoke it', () => {
    const alias = logicalId(stage, stage.stack.functions.of('authorizer').alias);
    const findings = findingsAfter((json) => {
      for (const [id, permission] of Object.entries(resourcesOfType(json, 'AWS::Lambda::Permission'))) {
        if (JSON.stringify(permission.Properties!.FunctionName).includes(alias)) delete json.Resources[id];
      }
    });
    expect(findings).toEqual([
      expect.stringMatching(
        /^API Gateway → Lambda: Api\/HttpApi → Functions\/authorizer\/Live \(authorizer ApiKeyAuthorizer\): no Lambda permission/,
      ),
    ]);
  });

  it("reports a route's permission that any API of the account could use", () => {
    const alias = logicalId(stage, stage.stack.functions.of('getPet').alias);
    const findings = findingsAfter((json) => {
      for (const permission of Object.values(resourcesOfType(json, 'AWS::Lambda::Permission'))) {
        if (JSON.stringify(permission.Properties!.FunctionName).includes(alias)) {
          permission.Properties!.SourceArn = `arn:aws:execute-api:${staging.region}:${staging.account}:*/*/*/v1/pets/{petId}`;
        }
      }
    });
    expect(findings).toEqual([
      expect.stringMatching(/Functions\/getPet\/Live \(GET \/v1\/pets\/\{petId\}\): its permission is not scoped to ⟨Api/),
    ]);
  });

  it('reports a function whose role lost the grant on a table its environment names', () => {
    const findings = findingsAfter((json) => {
      const document = policyOf(json, stage.stack.functions.of('getPet').role).Properties!.PolicyDocument;
      document.Statement = document.Statement.filter(
        (statement: { Action: unknown }) => !JSON.stringify(statement.Action).includes('dynamodb:'),
      );
    });
    expect(findings).toEqual([expect.stringMatching(/^function → table: Functions\/getPet\/Role → Pets\/Table .*may do nothing on it/)]);
  });

  it('reports the deployment traffic when its role may no longer invoke a function its environment names', () => {
    const findings = findingsAfter((json) => {
      const document = policyOf(json, stage.stack.deploymentTraffic.role).Properties!.PolicyDocument;
      document.Statement = document.Statement.filter((statement: { Action: unknown }) => statement.Action !== 'lambda:InvokeFunction');
    });
    expect(findings).toHaveLength(stage.stack.functions.all.length);
    for (const finding of findings)
      expect(finding).toMatch(/^function → function: DeploymentTraffic\/Role → .*may not lambda:InvokeFunction on it/);
  });

  it('reports a grant on a table the function does not use, and one on every table', () => {
    const keysTable = logicalId(stage, stage.stack.apiKeysTable.table);
    const findings = findingsAfter((json) => {
      const document = policyOf(json, stage.stack.functions.of('listPets').role).Properties!.PolicyDocument;
      document.Statement.push({ Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: { 'Fn::GetAtt': [keysTable, 'Arn'] } });
      document.Statement.push({ Effect: 'Allow', Action: 'dynamodb:Scan', Resource: '*' });
    });
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^function → table: Functions\/listPets\/Role → ApiKeys\/Table .*names no such table/),
        expect.stringMatching(/^function → table: Functions\/listPets\/Role → Idempotency\/Table .*names no such table/),
        expect.stringMatching(/^function → table: Functions\/listPets\/Role → any other table .*more than the function uses/),
        expect.stringMatching(/^function → table: Functions\/listPets\/Role → Pets\/Table .*stream/),
      ]),
    );
  });

  it('reports a function reading at run time a secret its role may not read', () => {
    const secret = logicalId(stage, stage.stack.node.findChild('CursorSecret').node.findChild('Secret'));
    const findings = findingsAfter((json) => {
      resource(json, stage.stack.functions.of('routeNotFound').function).Properties!.Environment.Variables.SOME_SECRET_ARN = {
        Ref: secret,
      };
    });
    expect(findings).toEqual([
      expect.stringMatching(
        /^function → secret: Functions\/routeNotFound\/Role → CursorSecret\/Secret .*may not secretsmanager:GetSecretValue/,
      ),
    ]);
  });

  it("reports every deployment group's alarms and alias when CodeDeploy's role loses AWS's policy for Lambda deployments", () => {
    const findings = findingsAfter((json) => {
      delete resource(json, stage.stack.trafficShifting.node.findChild('Role')).Properties!.ManagedPolicyArns;
    });
    const groups = stage.stack.trafficShifting.deploymentGroups.size;
    expect(
      findings.filter((finding) => finding.startsWith('CodeDeploy → alias') && finding.includes('may not lambda:UpdateAlias')),
    ).toHaveLength(groups);
    const rollbackAlarms = [...stage.stack.trafficShifting.deploymentGroups.keys()].flatMap(
      (name) => stage.stack.versionAlarms.byFunction.get(name)!,
    );
    // Its new version's failures, latency and at least its 401s and 503s, for every group.
    expect(rollbackAlarms.length).toBeGreaterThanOrEqual(4 * groups);
    expect(findings.filter((finding) => finding.startsWith('CodeDeploy → alarm'))).toHaveLength(rollbackAlarms.length);
    for (const finding of findings) expect(finding).toMatch(/its service role TrafficShifting\/Role may not/);
  });

  it('reports a managed policy it cannot read instead of assuming what it grants', () => {
    const findings = findingsAfter((json) => {
      resource(json, stage.stack.functions.of('authorizer').role).Properties!.ManagedPolicyArns = [
        'arn:aws:iam::aws:policy/AmazonDynamoDBFullAccess',
      ];
    });
    expect(findings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/Functions\/authorizer\/Role .*AmazonDynamoDBFullAccess, whose statements the graph does not know/),
      ]),
    );
  });
});

describe('the permission graph of a stage pointed at a restored pets table, by name', () => {
  const RESTORED = 'AnimalStore-Staging-pets-2026-11-20';
  const restoredArn = `arn:aws:dynamodb:${staging.region}:${staging.account}:table/${RESTORED}`;
  let restored: Synthesis;
  let stage: SynthesizedStage;
  beforeAll(() => {
    // Permissions do not depend on the bundles.
    restored = synthesize({
      stages: [{ ...staging, restoredPetsTable: { tableName: RESTORED } }],
      context: { 'aws:cdk:bundling-stacks': [] },
    });
    stage = restored.stage(staging.name);
  });
  afterAll(() => restored?.dispose());

  function findingsAfter(change: (json: CfnTemplate) => void): string[] {
    const json = structuredClone(stage.json);
    change(json);
    return findingsOf(permissionGraph(json, targetOf(staging)));
  }

  it('accepts each function naming the restored table in its environment and granted on its ARN, as an edge outside the template', () => {
    const graph = permissionGraph(stage.json, targetOf(staging));
    expect(findingsOf(graph), formatEdges(graph)).toEqual([]);
    const toRestored = edgesOfKind(graph, 'function → table').filter((edge) => edge.to.id === restoredArn);
    const { functions } = stage.stack;
    const indexes = PETS_INDEXES.map((index) => `index ${index.name}`)
      .sort()
      .join(', ');
    // Each function the catalog grants the pets table: a query is granted on its indexes, an item action on the table.
    const expected = API_FUNCTIONS.flatMap((name) => {
      const actions = (FUNCTION_CATALOG[name].tables as FunctionEntry['tables']).pets ?? [];
      if (actions.length === 0) return [];
      const items = actions.filter((action) => action !== 'Query');
      if (items.length > 0 && items.length < actions.length)
        throw new Error(`${name} both queries and reads items: say how its grant reads`);
      const detail =
        items.length === 0
          ? `dynamodb:Query on ${indexes}`
          : `${items
              .map((action) => `dynamodb:${action}`)
              .sort()
              .join(', ')} on the table`;
      return [[logicalId(stage, functions.of(name).role), detail, true]];
    });
    expect(expected.length).toBeGreaterThan(0);
    expect(toRestored.map((edge) => [edge.from.id, edge.detail, edge.outside]).sort()).toEqual(expected.sort());
  });

  it("draws no edge to the stack's own pets table, which no function uses any more", () => {
    const graph = permissionGraph(stage.json, targetOf(staging));
    const own = logicalId(stage, stage.stack.petsTable.stackTable!);
    expect(edgesOfKind(graph, 'function → table').filter((edge) => edge.to.id === own)).toEqual([]);
  });

  it('reports a function whose environment names the restored table when its role lost the grant on it', () => {
    const role = logicalId(stage, stage.stack.functions.of('getPet').role);
    const findings = findingsAfter((json) => {
      const [policy] = Object.values(resourcesOfType(json, 'AWS::IAM::Policy')).filter((p) =>
        JSON.stringify(p.Properties!.Roles).includes(role),
      );
      const document = policy!.Properties!.PolicyDocument;
      document.Statement = document.Statement.filter(
        (statement: { Action: unknown }) => !JSON.stringify(statement.Action).includes('dynamodb:'),
      );
    });
    expect(findings).toEqual([
      expect.stringMatching(new RegExp(`^function → table: Functions/getPet/Role → table ${RESTORED} .*may do nothing on it`)),
    ]);
  });

  it('reports a function granted on the restored table that its environment does not name', () => {
    const findings = findingsAfter((json) => {
      delete json.Resources[logicalId(stage, stage.stack.functions.of('getPet').function)]!.Properties!.Environment.Variables
        .PETS_TABLE_NAME;
    });
    expect(findings).toEqual([
      expect.stringMatching(new RegExp(`^function → table: Functions/getPet/Role → table ${RESTORED} .*names no such table`)),
    ]);
  });
});

describe('the permission graph of what a deployment hook and a scheduled probe bring (a bare stack)', () => {
  const ACCOUNT = '123456789012';
  const REGION = 'eu-west-1';

  function bareTemplate(): CfnTemplate {
    const stack = new Stack(new App(), 'Bare', { env: { account: ACCOUNT, region: REGION } });
    const code = Code.fromInline('exports.handler = async () => {};');
    const fn = new LambdaFn(stack, 'Function', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code });
    const alias = new Alias(stack, 'Live', { aliasName: 'live', version: fn.currentVersion });
    const hook = new LambdaFn(stack, 'Hook', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code });
    const probe = new LambdaFn(stack, 'Probe', { runtime: Runtime.NODEJS_22_X, handler: 'index.handler', code });
    const alarm = new Alarm(stack, 'Errors', { metric: fn.metricErrors(), threshold: 1, evaluationPeriods: 1 });
    new LambdaDeploymentGroup(stack, 'Group', {
      alias,
      deploymentConfig: LambdaDeploymentConfig.ALL_AT_ONCE,
      alarms: [alarm],
      preHook: hook,
    });
    // What a hook needs besides CDK's own grant, as infra/pre-traffic-checks.ts gives it.
    hook.addToRolePolicy(
      new PolicyStatement({
        actions: ['codedeploy:ListDeploymentTargets', 'codedeploy:GetDeploymentTarget', 'codedeploy:PutLifecycleEventHookExecutionStatus'],
        resources: ['*'],
      }),
    );
    new Rule(stack, 'Every5Minutes', { schedule: RuleSchedule.rate(Duration.minutes(5)), targets: [new LambdaFunction(probe)] });
    new Schedule(stack, 'ProbeSchedule', { schedule: ScheduleExpression.rate(Duration.minutes(5)), target: new LambdaInvoke(probe) });
    return Template.fromStack(stack).toJSON() as CfnTemplate;
  }

  const target = { account: ACCOUNT, region: REGION, stackName: 'Bare' };
  let template: CfnTemplate;
  beforeAll(() => {
    template = bareTemplate();
  });

  function findingsAfter(change: (json: CfnTemplate) => void): string[] {
    const json = structuredClone(template);
    change(json);
    return findingsOf(permissionGraph(json, target));
  }

  /** Drops every statement with `action` from every IAM policy of the template. */
  /** The template with `action` taken out of every policy statement, the statement's other actions left granted. */
  function withoutAction(action: string): (json: CfnTemplate) => void {
    return (json) => {
      for (const policy of Object.values(resourcesOfType(json, 'AWS::IAM::Policy'))) {
        const document = policy.Properties!.PolicyDocument;
        document.Statement = document.Statement.flatMap((statement: { Action: string | string[] }) => {
          const actions = [statement.Action].flat().filter((granted) => granted !== action);
          return actions.length === 0 ? [] : [{ ...statement, Action: actions }];
        });
      }
    };
  }

  it('finds and grants the hook, the rule and the schedule edges', () => {
    const graph = permissionGraph(template, target);
    expect(findingsOf(graph), formatEdges(graph)).toEqual([]);
    const kinds = graph.edges.map((edge) => edge.kind);
    for (const kind of ['CodeDeploy → hook', 'EventBridge rule → Lambda', 'EventBridge Scheduler → Lambda'] as const) {
      expect(
        kinds.filter((k) => k === kind),
        kind,
      ).toHaveLength(1);
    }
    expect(edgesOfKind(graph, 'hook → CodeDeploy').map((edge) => edge.detail)).toEqual([
      'codedeploy:ListDeploymentTargets',
      'codedeploy:GetDeploymentTarget',
      'codedeploy:PutLifecycleEventHookExecutionStatus',
    ]);
  });

  it("reports the hook when CodeDeploy's role may no longer invoke it", () => {
    expect(findingsAfter(withoutAction('lambda:InvokeFunction'))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^CodeDeploy → hook: Group\w* → Hook\w* \(BeforeAllowTrafficHook\): its service role .* may not lambda:InvokeFunction/,
        ),
      ]),
    );
  });

  it('reports the hook when it may no longer report back to CodeDeploy', () => {
    expect(findingsAfter(withoutAction('codedeploy:PutLifecycleEventHookExecutionStatus'))).toEqual([
      expect.stringMatching(/^hook → CodeDeploy: HookServiceRole\w* → Group\w* .*may not codedeploy:PutLifecycleEventHookExecutionStatus/),
    ]);
  });

  it('reports the hook whose CodeDeploy calls are granted on its deployment group alone, as CDK grants the report', () => {
    const scoped = (json: CfnTemplate) => {
      for (const policy of Object.values(resourcesOfType(json, 'AWS::IAM::Policy'))) {
        const document = policy.Properties!.PolicyDocument;
        document.Statement = document.Statement.filter((statement: { Resource: unknown }) => statement.Resource !== '*');
      }
    };
    expect(findingsAfter(scoped)).toEqual([
      expect.stringMatching(/^hook → CodeDeploy: HookServiceRole\w* → Group\w* .*may not codedeploy:ListDeploymentTargets on \*/),
      expect.stringMatching(/^hook → CodeDeploy: HookServiceRole\w* → Group\w* .*may not codedeploy:GetDeploymentTarget on \*/),
      expect.stringMatching(
        /^hook → CodeDeploy: HookServiceRole\w* → Group\w* .*may not codedeploy:PutLifecycleEventHookExecutionStatus on \*/,
      ),
    ]);
  });

  it('reports the schedule when its role may no longer invoke the probe', () => {
    expect(findingsAfter(withoutAction('lambda:InvokeFunction'))).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^EventBridge Scheduler → Lambda: ProbeSchedule\w* → Probe\w*.*may not lambda:InvokeFunction/),
      ]),
    );
  });

  it("reports the rule when the probe's resource policy no longer admits it", () => {
    const findings = findingsAfter((json) => {
      for (const [id, permission] of Object.entries(resourcesOfType(json, 'AWS::Lambda::Permission'))) {
        if (permission.Properties!.Principal === 'events.amazonaws.com') delete json.Resources[id];
      }
    });
    expect(findings).toEqual([
      expect.stringMatching(/^EventBridge rule → Lambda: Every5Minutes\w* → Probe\w* .*no Lambda permission lets events\.amazonaws\.com/),
    ]);
  });
});
