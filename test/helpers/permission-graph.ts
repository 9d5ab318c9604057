import type { CfnResourceJson, CfnTemplate } from '../../tools/lambda/synth';

/**
 * The permission graph of a synthesized template: every call one AWS service makes to another on
 * the stack's behalf (API Gateway invoking an alias, an alarm publishing to its topic, CodeDeploy
 * reading alarms, moving aliases and invoking hooks, a schedule invoking a function, a function
 * reading its tables and secrets and writing its logs), each checked against the resource policy or
 * role that must grant it. Edges are derived from the template, never listed by hand: a function,
 * alarm or schedule added later is walked the day it appears. Policies are evaluated as AWS does for
 * what the template uses (Allow, Deny, Action, Resource, Principal and the common condition
 * operators); what it cannot evaluate is reported, never assumed granted. A test's oracle: a failing
 * test/infra/permission-graph.test.ts prints every edge with what grants it.
 */

/** Where the template is deployed: the values of its pseudo parameters. */
export interface DeploymentTarget {
  readonly account: string;
  readonly region: string;
  readonly stackName: string;
  /** `aws` unless said otherwise. */
  readonly partition?: string;
}

export type EdgeKind =
  | 'API Gateway → Lambda'
  | 'CloudWatch alarm → SNS topic'
  | 'CodeDeploy → alarm'
  | 'CodeDeploy → alias'
  | 'CodeDeploy → hook'
  | 'hook → CodeDeploy'
  | 'EventBridge rule → Lambda'
  | 'EventBridge Scheduler → Lambda'
  | 'function → function'
  | 'function → table'
  | 'function → secret'
  | 'function → log group';

/**
 * What a deployment hook calls, by the lifecycle event it serves: before traffic, list a deployment's targets,
 * get each and report its verdict (functions/pre-traffic-hook/); after, read the deployment while it bakes and
 * report (functions/deployment-traffic/).
 */
const HOOK_CALLS = {
  BeforeAllowTrafficHook: [
    'codedeploy:ListDeploymentTargets',
    'codedeploy:GetDeploymentTarget',
    'codedeploy:PutLifecycleEventHookExecutionStatus',
  ],
  AfterAllowTrafficHook: ['codedeploy:GetDeployment', 'codedeploy:PutLifecycleEventHookExecutionStatus'],
} as const;

/**
 * Actions the Service Authorization Reference lists with no resource type (its CodeDeploy page; cfn-lint
 * ships a copy): only "*" can grant them, whatever deployment the call concerns. GetDeployment takes the group.
 */
const WITHOUT_RESOURCE_TYPE: ReadonlySet<string> = new Set([
  'codedeploy:ListDeploymentTargets',
  'codedeploy:GetDeploymentTarget',
  'codedeploy:PutLifecycleEventHookExecutionStatus',
]);

/** One end of an edge: a resource of the template, or something outside it. */
export interface Endpoint {
  /** Logical id in the template; the ARN or name when outside it. */
  readonly id: string;
  /** Construct path when the template has one (cdk synth adds it), else the id. */
  readonly label: string;
}

export interface Edge {
  readonly kind: EdgeKind;
  readonly from: Endpoint;
  readonly to: Endpoint;
  /** What is called: a route, actions, an index. */
  readonly detail: string;
  /** The policies that grant the call. */
  readonly grantedBy: readonly string[];
  /** Why AWS would refuse the call, or why the grant is wrong (too wide, unused); empty when it is right. */
  readonly problems: readonly string[];
  /** True when the far end is outside the template (an existing topic): listed, not provable here. */
  readonly outside?: boolean;
}

export interface PermissionGraph {
  readonly edges: readonly Edge[];
}

/** Every problem of the graph, one line each. */
export function findingsOf(graph: PermissionGraph): string[] {
  return graph.edges.flatMap((edge) => edge.problems.map((problem) => `${describeEdge(edge)}: ${problem}`));
}

/** Every resource of the template an edge starts or ends at, by logical id. */
export function endpointsOf(graph: PermissionGraph): Set<string> {
  return new Set(graph.edges.flatMap((edge) => [edge.from.id, edge.to.id]));
}

export function describeEdge(edge: Edge): string {
  const detail = edge.detail ? ` (${edge.detail})` : '';
  return `${edge.kind}: ${edge.from.label} → ${edge.to.label}${detail}`;
}

/** The edges one per line, each with what grants it or what is wrong with it. */
export function formatEdges(graph: PermissionGraph): string {
  return graph.edges
    .map((edge) => {
      const status = edge.problems.length > 0 ? `PROBLEM ${edge.problems.join('; ')}` : edge.outside ? 'outside the template' : 'ok';
      return `${describeEdge(edge)}\n    ${status}${edge.grantedBy.length > 0 ? `; granted by ${edge.grantedBy.join(', ')}` : ''}`;
    })
    .join('\n');
}

/** A template value reduced to a string: references become ⟨tokens⟩ only a `*` (or the same reference) matches. */
const token = (name: string) => `⟨${name}⟩`;
/** The account a confused deputy would act for. */
const FOREIGN_ACCOUNT = '000000000000';

interface Statement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Principal?: unknown;
  readonly NotPrincipal?: unknown;
  readonly Action?: unknown;
  readonly NotAction?: unknown;
  readonly Resource?: unknown;
  readonly NotResource?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

/** A statement and where it comes from, for the report. */
interface Sourced {
  readonly statement: Statement;
  readonly source: string;
}

interface Request {
  /** The calling service, for resource policies; identity policies ignore it. */
  readonly service?: string;
  readonly action: string;
  readonly resource: string;
  /** Global condition keys of the request. */
  readonly context: Readonly<Record<string, string>>;
}

interface Decision {
  readonly allowed: boolean;
  readonly allowedBy: readonly string[];
  readonly problems: readonly string[];
}

/**
 * AWS managed policies the template may attach, as AWS publishes them
 * (docs.aws.amazon.com/aws-managed-policy/latest/reference/): the graph cannot read them from the template.
 */
const AWS_MANAGED_POLICIES: Readonly<Record<string, readonly Statement[]>> = {
  'service-role/AWSCodeDeployRoleForLambdaLimited': [
    {
      Effect: 'Allow',
      Action: ['cloudwatch:DescribeAlarms', 'lambda:UpdateAlias', 'lambda:GetAlias', 'lambda:GetProvisionedConcurrencyConfig'],
      Resource: '*',
    },
    { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: 'arn:aws:lambda:*:*:function:CodeDeployHook_*' },
  ],
  'service-role/AWSCodeDeployRoleForLambda': [
    {
      Effect: 'Allow',
      Action: [
        'cloudwatch:DescribeAlarms',
        'lambda:UpdateAlias',
        'lambda:GetAlias',
        'lambda:GetProvisionedConcurrencyConfig',
        'sns:Publish',
      ],
      Resource: '*',
    },
    { Effect: 'Allow', Action: ['lambda:InvokeFunction'], Resource: 'arn:aws:lambda:*:*:function:CodeDeployHook_*' },
  ],
  'service-role/AWSLambdaBasicExecutionRole': [
    { Effect: 'Allow', Action: ['logs:CreateLogGroup', 'logs:CreateLogStream', 'logs:PutLogEvents'], Resource: '*' },
  ],
};

/** Reads a template: resources by type and intrinsic functions reduced to comparable strings. */
class TemplateReader {
  readonly partition: string;

  constructor(
    readonly template: CfnTemplate,
    readonly target: DeploymentTarget,
  ) {
    this.partition = target.partition ?? 'aws';
  }

  resource(id: string): CfnResourceJson | undefined {
    return this.template.Resources[id];
  }

  props(id: string): Record<string, any> {
    return this.template.Resources[id]?.Properties ?? {};
  }

  ofType(...types: string[]): [string, CfnResourceJson][] {
    return Object.entries(this.template.Resources).filter(([, resource]) => types.includes(resource.Type));
  }

  endpoint(id: string): Endpoint {
    const path = this.resource(id)?.Metadata?.['aws:cdk:path'] as string | undefined;
    if (!path) return { id, label: id };
    return { id, label: path.replace(/^[^/]+\//, '').replace(/\/(Resource|Default)$/, '') };
  }

  arn(service: string, resource: string, region = this.target.region, account = this.target.account): string {
    return `arn:${this.partition}:${service}:${region}:${account}:${resource}`;
  }

  /** A template value as a string; references to resources of the template become tokens. */
  render(value: unknown): string {
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return token('?');
    const [fn, args] = Object.entries(value)[0] ?? [];
    switch (fn) {
      case 'Ref':
        return this.ref(args as string);
      case 'Fn::GetAtt': {
        const [id, attribute] = Array.isArray(args) ? args : String(args).split(/\.(.*)/);
        return this.getAtt(id as string, attribute as string);
      }
      case 'Fn::Join': {
        const [separator, parts] = args as [string, unknown[]];
        return this.renderList(parts).join(separator);
      }
      case 'Fn::Sub': {
        const [text, variables] = (Array.isArray(args) ? args : [args, {}]) as [string, Record<string, unknown>];
        return text.replace(/\$\{([^!}][^}]*)\}/g, (_, name: string) => {
          if (name in variables) return this.render(variables[name]);
          const [id, attribute] = name.split(/\.(.*)/);
          return attribute ? this.getAtt(id!, attribute) : this.ref(id!);
        });
      }
      case 'Fn::Select': {
        const [index, list] = args as [number | string, unknown];
        return this.renderList(list)[Number(index)] ?? token('?');
      }
      default:
        return token('?');
    }
  }

  renderList(value: unknown): string[] {
    if (Array.isArray(value)) return value.map((item) => this.render(item));
    const split = (value as Record<string, unknown> | undefined)?.['Fn::Split'] as [string, unknown] | undefined;
    if (split) return this.render(split[1]).split(split[0]);
    return [this.render(value)];
  }

  /** What `Ref` returns, by resource type. */
  ref(id: string): string {
    switch (id) {
      case 'AWS::AccountId':
        return this.target.account;
      case 'AWS::Region':
        return this.target.region;
      case 'AWS::Partition':
        return this.partition;
      case 'AWS::StackName':
        return this.target.stackName;
      case 'AWS::URLSuffix':
        return 'amazonaws.com';
    }
    const resource = this.resource(id);
    if (!resource) return token(id);
    const p = resource.Properties ?? {};
    switch (resource.Type) {
      case 'AWS::Lambda::Function':
        return this.nameOf(id);
      case 'AWS::Lambda::Alias':
        return `${this.lambdaArn(this.functionName(p.FunctionName))}:${this.render(p.Name)}`;
      case 'AWS::Lambda::Version':
        return `${this.lambdaArn(this.functionName(p.FunctionName))}:${token(`${id}.Version`)}`;
      case 'AWS::SNS::Topic':
        return this.arn('sns', this.nameOf(id));
      case 'AWS::SecretsManager::Secret':
        return this.arn('secretsmanager', `secret:${p.Name === undefined ? token(id) : `${this.render(p.Name)}-${token(`${id}.suffix`)}`}`);
      case 'AWS::IAM::ManagedPolicy':
        return `arn:${this.partition}:iam::${this.target.account}:policy/${this.nameOf(id)}`;
      default:
        return this.nameOf(id);
    }
  }

  getAtt(id: string, attribute: string): string {
    const resource = this.resource(id);
    if (!resource) return token(`${id}.${attribute}`);
    const name = this.nameOf(id);
    switch (`${resource.Type}.${attribute}`) {
      case 'AWS::Lambda::Function.Arn':
        return this.lambdaArn(name);
      case 'AWS::SNS::Topic.TopicArn':
        return this.ref(id);
      case 'AWS::SNS::Topic.TopicName':
        return name;
      case 'AWS::CloudWatch::Alarm.Arn':
        return this.arn('cloudwatch', `alarm:${name}`);
      case 'AWS::DynamoDB::Table.Arn':
      case 'AWS::DynamoDB::GlobalTable.Arn':
        return this.arn('dynamodb', `table/${name}`);
      case 'AWS::Logs::LogGroup.Arn':
        return this.arn('logs', `log-group:${name}:*`);
      case 'AWS::IAM::Role.Arn':
        return `arn:${this.partition}:iam::${this.target.account}:role/${name}`;
      case 'AWS::Events::Rule.Arn':
        return this.arn('events', `rule/${name}`);
      case 'AWS::Scheduler::Schedule.Arn':
        return this.arn('scheduler', `schedule/${this.render(resource.Properties?.GroupName ?? 'default')}/${name}`);
      case 'AWS::KMS::Key.Arn':
        return this.arn('kms', `key/${token(id)}`);
      case 'AWS::KMS::Key.KeyId':
        return token(id);
      default:
        return token(`${id}.${attribute}`);
    }
  }

  /** The name a resource is given in its name property, or a token for the one CloudFormation generates. */
  nameOf(id: string): string {
    const resource = this.resource(id);
    const property = resource && NAME_PROPERTIES[resource.Type];
    const name = property && resource.Properties?.[property];
    return name === undefined ? token(id) : this.render(name);
  }

  lambdaArn(functionName: string, qualifier?: string): string {
    return this.arn('lambda', `function:${functionName}${qualifier === undefined ? '' : `:${qualifier}`}`);
  }

  /** The function name inside a FunctionName property, which may hold a name or an ARN. */
  functionName(value: unknown): string {
    return parseLambdaTarget(this.render(value))?.name ?? token('?');
  }

  /** The logical id of the function of this name, if the template defines it. */
  functionIdNamed(name: string): string | undefined {
    return this.ofType('AWS::Lambda::Function').find(([id]) => this.nameOf(id) === name)?.[0];
  }
}

const NAME_PROPERTIES: Readonly<Record<string, string>> = {
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::CloudWatch::Alarm': 'AlarmName',
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::DynamoDB::GlobalTable': 'TableName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::CodeDeploy::Application': 'ApplicationName',
  'AWS::CodeDeploy::DeploymentGroup': 'DeploymentGroupName',
  'AWS::Events::Rule': 'Name',
  'AWS::Scheduler::Schedule': 'Name',
  'AWS::SecretsManager::Secret': 'Name',
};

/** A function (by name) and the version or alias invoked, from a name, an ARN or an API Gateway integration URI. */
interface LambdaTarget {
  readonly name: string;
  readonly qualifier?: string;
}

function parseLambdaTarget(value: string): LambdaTarget | undefined {
  const integration = /^arn:[^:]+:apigateway:[^:]+:lambda:path\/[^/]+\/functions\/(.+)\/invocations$/.exec(value);
  if (integration) return parseLambdaTarget(integration[1]!);
  const parts = value.split(':');
  if (value.startsWith('arn:')) {
    if (parts[2] !== 'lambda' || parts[5] !== 'function' || !parts[6]) return undefined;
    return parts[7] === undefined ? { name: parts[6] } : { name: parts[6], qualifier: parts[7] };
  }
  if (parts.length > 2 || !parts[0]) return undefined;
  return parts[1] === undefined ? { name: parts[0] } : { name: parts[0], qualifier: parts[1] };
}

const asArray = (value: unknown): unknown[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

function globMatch(pattern: string, subject: string, ignoreCase = false): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(subject);
}

/** IAM's ArnLike: the first five colons split both into the same six parts, each matched on its own. */
function arnLike(pattern: string, subject: string): boolean {
  if (pattern === '*') return true;
  const split = (arn: string) => {
    const parts = arn.split(':');
    return parts.length < 6 ? undefined : [...parts.slice(0, 5), parts.slice(5).join(':')];
  };
  const p = split(pattern);
  const s = split(subject);
  if (!p || !s) return globMatch(pattern, subject);
  return p.every((part, index) => globMatch(part, s[index]!));
}

/**
 * A policy evaluator over the rendered template. Hand-written: @cloud-copilot/iam-simulate's synchronous entry
 * point throws on any resource policy, and the graph is built synchronously.
 */
class PolicyEvaluator {
  constructor(private readonly reader: TemplateReader) {}

  evaluate(statements: readonly Sourced[], request: Request, resourcePolicy: boolean): Decision {
    const problems: string[] = [];
    const applying = (effect: 'Allow' | 'Deny') =>
      statements.filter(({ statement, source }) => {
        if (statement.Effect !== effect) return false;
        try {
          return this.applies(statement, request, resourcePolicy);
        } catch (error) {
          problems.push(`${source}: ${(error as Error).message}`);
          return false;
        }
      });
    const allowedBy = applying('Allow').map(({ source }) => source);
    const deniedBy = applying('Deny').map(({ source }) => source);
    for (const source of deniedBy) problems.push(`denied by ${source}`);
    return { allowed: allowedBy.length > 0 && deniedBy.length === 0 && problems.length === 0, allowedBy, problems };
  }

  private applies(statement: Statement, request: Request, resourcePolicy: boolean): boolean {
    if (resourcePolicy) {
      if (statement.Principal !== undefined && !this.principalMatches(statement.Principal, request)) return false;
      if (statement.NotPrincipal !== undefined && this.principalMatches(statement.NotPrincipal, request)) return false;
    }
    const actionMatches = (patterns: unknown) =>
      asArray(patterns).some((pattern) => globMatch(this.reader.render(pattern), request.action, true));
    if (statement.Action !== undefined && !actionMatches(statement.Action)) return false;
    if (statement.NotAction !== undefined && actionMatches(statement.NotAction)) return false;
    const resourceMatches = (patterns: unknown) =>
      asArray(patterns).some((pattern) => arnLike(this.reader.render(pattern), request.resource));
    if (statement.Resource !== undefined && !resourceMatches(statement.Resource)) return false;
    if (statement.NotResource !== undefined && resourceMatches(statement.NotResource)) return false;
    return this.conditionsHold(statement.Condition, request.context);
  }

  private principalMatches(principal: unknown, request: Request): boolean {
    if (principal === '*') return true;
    const { AWS, Service } = principal as { AWS?: unknown; Service?: unknown };
    if (asArray(AWS).some((value) => this.reader.render(value) === '*')) return true;
    return request.service !== undefined && asArray(Service).some((value) => this.reader.render(value) === request.service);
  }

  private conditionsHold(condition: Statement['Condition'], context: Request['context']): boolean {
    const values = new Map(Object.entries(context).map(([key, value]) => [key.toLowerCase(), value]));
    return Object.entries(condition ?? {}).every(([rawOperator, block]) => {
      const ifExists = rawOperator.endsWith('IfExists');
      const operator = rawOperator.replace(/^For(Any|All)Values:/, '').replace(/IfExists$/, '');
      return Object.entries(block).every(([key, expected]) => {
        const wanted = asArray(expected).map((value) => this.reader.render(value));
        const actual = values.get(key.toLowerCase());
        if (operator === 'Null') return wanted.some((value) => (value === 'true') === (actual === undefined));
        const negated = /Not/.test(operator);
        if (actual === undefined) return ifExists || negated;
        const test = OPERATORS[operator.replace('Not', '')];
        if (!test) throw new Error(`cannot evaluate condition operator ${rawOperator}`);
        const matched = wanted.some((value) => test(value, actual));
        return negated ? !matched : matched;
      });
    });
  }
}

const OPERATORS: Readonly<Record<string, (expected: string, actual: string) => boolean>> = {
  StringEquals: (expected, actual) => expected === actual,
  StringEqualsIgnoreCase: (expected, actual) => expected.toLowerCase() === actual.toLowerCase(),
  StringLike: (expected, actual) => globMatch(expected, actual),
  ArnEquals: (expected, actual) => arnLike(expected, actual),
  ArnLike: (expected, actual) => arnLike(expected, actual),
  Bool: (expected, actual) => expected.toLowerCase() === actual.toLowerCase(),
};

/** Builds the graph of one template. */
export function permissionGraph(template: CfnTemplate, target: DeploymentTarget): PermissionGraph {
  return { edges: new GraphBuilder(new TemplateReader(template, target)).build() };
}

class GraphBuilder {
  private readonly evaluator: PolicyEvaluator;
  private readonly edges: Edge[] = [];

  constructor(private readonly reader: TemplateReader) {
    this.evaluator = new PolicyEvaluator(reader);
  }

  build(): Edge[] {
    this.apiGatewayEdges();
    this.alarmEdges();
    this.codeDeployEdges();
    this.ruleEdges();
    this.scheduleEdges();
    this.functionRoleEdges();
    return this.edges;
  }

  private add(edge: Omit<Edge, 'problems' | 'grantedBy'> & { grantedBy?: readonly string[]; problems?: readonly string[] }): void {
    this.edges.push({ grantedBy: [], problems: [], ...edge });
  }

  // API Gateway → Lambda: each route's integration and each authorizer, by the function's resource policy.

  private apiGatewayEdges(): void {
    const r = this.reader;
    for (const [, route] of r.ofType('AWS::ApiGatewayV2::Route')) {
      const p = route.Properties ?? {};
      const integrationId = /^integrations\/⟨(.+)⟩$/.exec(r.render(p.Target))?.[1];
      const integration = integrationId === undefined ? {} : r.props(integrationId);
      const target = parseLambdaTarget(r.render(integration.IntegrationUri ?? ''));
      if (!target) continue;
      const api = r.render(p.ApiId);
      const routeKey = r.render(p.RouteKey);
      const [method, path] = routeKey === '$default' ? [token('method'), `/${token('path')}`] : routeKey.split(' ');
      const stages = r
        .ofType('AWS::ApiGatewayV2::Stage')
        .filter(([, stage]) => r.render(stage.Properties?.ApiId) === api)
        .map(([, stage]) => r.render(stage.Properties?.StageName));
      const sources = (stages.length > 0 ? stages : [token('stage')]).map(
        (stage) => `${api}/${stage}/${method === 'ANY' ? token('method') : method}${path}`,
      );
      this.invokeEdge('API Gateway → Lambda', this.apiEndpoint(api), routeKey, target, 'apigateway.amazonaws.com', sources, api);
    }
    for (const [authorizerId, authorizer] of r.ofType('AWS::ApiGatewayV2::Authorizer')) {
      const p = authorizer.Properties ?? {};
      const target = parseLambdaTarget(r.render(p.AuthorizerUri ?? ''));
      if (!target) continue;
      const api = r.render(p.ApiId);
      const source = `${api}/authorizers/${r.ref(authorizerId)}`;
      this.invokeEdge(
        'API Gateway → Lambda',
        this.apiEndpoint(api),
        `authorizer ${r.render(p.Name)}`,
        target,
        'apigateway.amazonaws.com',
        [source],
        api,
      );
    }
  }

  private apiEndpoint(api: string): Endpoint {
    const id = /^⟨(.+)⟩$/.exec(api)?.[1];
    return id === undefined ? { id: api, label: api } : this.reader.endpoint(id);
  }

  /**
   * An edge that a Lambda resource policy grants: the service invokes `target` from each of `sources`
   * (the resource part of an execute-api ARN, or a whole ARN). It must be allowed from each, and refused
   * for another account and, where `scope` names the source resource, for another such resource.
   */
  private invokeEdge(
    kind: EdgeKind,
    from: Endpoint,
    detail: string,
    target: LambdaTarget,
    service: string,
    sources: readonly string[],
    scope: string,
  ): void {
    const r = this.reader;
    const statements = this.lambdaPermissions(target);
    const sourceArn = (source: string, account = r.target.account) =>
      source.startsWith('arn:')
        ? source.replace(/^(arn:[^:]*:[^:]*:[^:]*:)[^:]*/, `$1${account}`)
        : r.arn('execute-api', source, undefined, account);
    const request = (source: string, account = r.target.account): Request => ({
      service,
      action: 'lambda:InvokeFunction',
      resource: r.lambdaArn(target.name, target.qualifier),
      context: { 'aws:SourceArn': sourceArn(source, account), 'aws:SourceAccount': account },
    });
    const problems: string[] = [];
    const grantedBy = new Set<string>();
    for (const source of sources) {
      const decision = this.evaluator.evaluate(statements, request(source), true);
      for (const by of decision.allowedBy) grantedBy.add(by);
      problems.push(...decision.problems);
      if (!decision.allowed) problems.push(`no Lambda permission lets ${service} invoke it from ${sourceArn(source)}`);
      if (this.evaluator.evaluate(statements, request(source, FOREIGN_ACCOUNT), true).allowed) {
        problems.push(
          `its permission is not scoped to this account (aws:SourceAccount or aws:SourceArn): another account's ${service} could invoke it`,
        );
      }
      const elsewhere = source.replace(scope, token('another source'));
      if (elsewhere !== source && this.evaluator.evaluate(statements, request(elsewhere), true).allowed) {
        problems.push(`its permission is not scoped to ${scope} (aws:SourceArn): any other one in the account could invoke it`);
      }
    }
    this.add({ kind, from, to: this.lambdaEndpoint(target), detail, grantedBy: [...grantedBy], problems: [...new Set(problems)] });
  }

  /** The resource policy of one function version or alias: the AWS::Lambda::Permission resources naming exactly it. */
  private lambdaPermissions(target: LambdaTarget): Sourced[] {
    const r = this.reader;
    return r
      .ofType('AWS::Lambda::Permission')
      .filter(([, permission]) => {
        const named = parseLambdaTarget(r.render(permission.Properties?.FunctionName));
        return named?.name === target.name && named.qualifier === target.qualifier;
      })
      .map(([id, permission]) => {
        const p = permission.Properties ?? {};
        const principal = r.render(p.Principal);
        const condition: Record<string, Record<string, unknown>> = {};
        if (p.SourceArn !== undefined) condition.ArnLike = { 'aws:SourceArn': p.SourceArn };
        if (p.SourceAccount !== undefined) condition.StringEquals = { 'aws:SourceAccount': p.SourceAccount };
        const statement: Statement = {
          Effect: 'Allow',
          Principal: principal === '*' ? '*' : principal.endsWith('.amazonaws.com') ? { Service: principal } : { AWS: principal },
          Action: p.Action,
          Condition: condition,
        };
        return { statement, source: `Lambda permission ${r.endpoint(id).label}` };
      });
  }

  private lambdaEndpoint(target: LambdaTarget): Endpoint {
    const r = this.reader;
    const functionId = r.functionIdNamed(target.name);
    if (functionId === undefined) return { id: target.name, label: target.name };
    if (target.qualifier === undefined) return r.endpoint(functionId);
    const alias = r
      .ofType('AWS::Lambda::Alias')
      .find(([, a]) => r.functionName(a.Properties?.FunctionName) === target.name && r.render(a.Properties?.Name) === target.qualifier);
    return alias
      ? r.endpoint(alias[0])
      : { id: `${functionId}:${target.qualifier}`, label: `${r.endpoint(functionId).label}:${target.qualifier}` };
  }

  // CloudWatch alarm → SNS topic: the topic policy (and the key policy of an encrypted topic).

  private alarmEdges(): void {
    const r = this.reader;
    const topics = new Map(r.ofType('AWS::SNS::Topic').map(([id]) => [r.ref(id), id]));
    for (const [alarmId, alarm] of r.ofType('AWS::CloudWatch::Alarm')) {
      const p = alarm.Properties ?? {};
      const actions = new Set(
        [...asArray(p.AlarmActions), ...asArray(p.OKActions), ...asArray(p.InsufficientDataActions)].map((action) => r.render(action)),
      );
      for (const action of actions) {
        if (!arnLike('arn:*:sns:*:*:*', action)) continue;
        const topicId = topics.get(action);
        if (topicId === undefined) {
          this.add({
            kind: 'CloudWatch alarm → SNS topic',
            from: r.endpoint(alarmId),
            to: { id: action, label: action },
            detail: 'sns:Publish',
            outside: true,
          });
          continue;
        }
        this.add({
          kind: 'CloudWatch alarm → SNS topic',
          from: r.endpoint(alarmId),
          to: r.endpoint(topicId),
          detail: 'sns:Publish',
          ...this.publish(alarmId, topicId),
        });
      }
    }
  }

  private publish(alarmId: string, topicId: string): { grantedBy: string[]; problems: string[] } {
    const r = this.reader;
    const topicArn = r.ref(topicId);
    const policies = r
      .ofType('AWS::SNS::TopicPolicy')
      .filter(([, policy]) => asArray(policy.Properties?.Topics).some((t) => r.render(t) === topicArn));
    const problems: string[] = [];
    if (policies.length > 1) problems.push(`${policies.length} topic policies name the topic, and SNS keeps only the last one written`);
    // SNS's default policy, which any topic policy replaces, lets the owner account's principals publish.
    const statements: Sourced[] =
      policies.length === 0
        ? [
            {
              statement: {
                Effect: 'Allow',
                Principal: { AWS: '*' },
                Action: 'SNS:Publish',
                Resource: topicArn,
                Condition: { StringEquals: { 'AWS:SourceOwner': r.target.account } },
              },
              source: "SNS's default topic policy",
            },
          ]
        : policies.flatMap(([id, policy]) =>
            asArray(policy.Properties?.PolicyDocument?.Statement).map((statement) => ({
              statement: statement as Statement,
              source: `topic policy ${r.endpoint(id).label}`,
            })),
          );
    // AWS services call each other over TLS, so a Deny on aws:SecureTransport false does not apply to CloudWatch.
    const request = (account: string): Request => ({
      service: 'cloudwatch.amazonaws.com',
      action: 'sns:Publish',
      resource: topicArn,
      context: {
        'aws:SourceArn': r.arn('cloudwatch', `alarm:${r.ref(alarmId)}`, undefined, account),
        'aws:SourceAccount': account,
        'aws:SourceOwner': account,
        'aws:SecureTransport': 'true',
      },
    });
    const decision = this.evaluator.evaluate(statements, request(r.target.account), true);
    problems.push(...decision.problems);
    if (!decision.allowed) problems.push('the topic policy does not let cloudwatch.amazonaws.com publish for this alarm');
    if (this.evaluator.evaluate(statements, request(FOREIGN_ACCOUNT), true).allowed) {
      problems.push(
        "the topic policy is not scoped to this account's alarms (aws:SourceAccount, aws:SourceArn): another account's alarms could publish",
      );
    }
    const grantedBy = [...decision.allowedBy];

    const key = r.props(topicId).KmsMasterKeyId;
    if (key !== undefined) {
      problems.push(...this.keyAdmitsCloudWatch(r.render(key), (account) => request(account).context, grantedBy));
    }
    return { grantedBy, problems: [...new Set(problems)] };
  }

  /** SNS encrypts an alarm's message with the topic's key on CloudWatch's behalf: the key policy must admit it. */
  private keyAdmitsCloudWatch(key: string, context: (account: string) => Request['context'], grantedBy: string[]): string[] {
    const r = this.reader;
    if (/(^|:)alias\/aws\//.test(key))
      return [`the topic is encrypted with an AWS managed key (${key}), whose policy cannot admit CloudWatch`];
    const keyId = r.ofType('AWS::KMS::Key').find(([id]) => key === r.ref(id) || key === r.getAtt(id, 'Arn'))?.[0];
    if (keyId === undefined) return [`the topic is encrypted with ${key}, a key outside the template whose policy cannot be checked here`];
    const statements = asArray(r.props(keyId).KeyPolicy?.Statement).map((statement) => ({
      statement: statement as Statement,
      source: `key policy ${r.endpoint(keyId).label}`,
    }));
    const problems: string[] = [];
    for (const action of ['kms:Decrypt', 'kms:GenerateDataKey']) {
      const request = (account: string): Request => ({
        service: 'cloudwatch.amazonaws.com',
        action,
        resource: r.getAtt(keyId, 'Arn'),
        context: context(account),
      });
      const decision = this.evaluator.evaluate(statements, request(r.target.account), true);
      problems.push(...decision.problems);
      if (decision.allowed) grantedBy.push(...decision.allowedBy.filter((by) => !grantedBy.includes(by)));
      else problems.push(`the key policy does not let cloudwatch.amazonaws.com ${action} for this alarm`);
      if (this.evaluator.evaluate(statements, request(FOREIGN_ACCOUNT), true).allowed) {
        problems.push(`the key policy lets another account's alarms ${action} (aws:SourceAccount, aws:SourceArn)`);
      }
    }
    return problems;
  }

  // CodeDeploy: the deployment group's service role reads its alarms, moves its aliases and invokes
  // the hooks; a hook reports back with its own role.

  private codeDeployEdges(): void {
    const r = this.reader;
    const alarmsByName = new Map(r.ofType('AWS::CloudWatch::Alarm').map(([id]) => [r.ref(id), id]));
    for (const [groupId, group] of r.ofType('AWS::CodeDeploy::DeploymentGroup')) {
      const p = group.Properties ?? {};
      const from = r.endpoint(groupId);
      const role = this.serviceRole(p.ServiceRoleArn, 'codedeploy.amazonaws.com', {});
      const asRole = (action: string, resource: string) => {
        const grant = this.roleMay(role, action, resource, `its service role ${role.label}`);
        return { grantedBy: grant.allowedBy.map((by) => `${by} of role ${role.label}`), problems: grant.problems };
      };

      const alarmConfiguration = p.AlarmConfiguration ?? {};
      for (const alarm of asArray(alarmConfiguration.Alarms)) {
        const name = r.render((alarm as { Name?: unknown }).Name);
        const alarmId = alarmsByName.get(name);
        const to = alarmId === undefined ? { id: name, label: name } : r.endpoint(alarmId);
        const grant = asRole('cloudwatch:DescribeAlarms', r.arn('cloudwatch', `alarm:${name}`));
        const problems = [...grant.problems];
        if (alarmId === undefined)
          problems.push('the alarm is not in the template: CodeDeploy would fail the deployment when it cannot find it');
        if (r.render(alarmConfiguration.Enabled) !== 'true')
          problems.push('the alarm configuration is disabled: the alarm rolls nothing back');
        this.add({ kind: 'CodeDeploy → alarm', from, to, detail: 'cloudwatch:DescribeAlarms', grantedBy: grant.grantedBy, problems });
      }

      const groupName = r.ref(groupId);
      for (const [aliasId, alias] of r.ofType('AWS::Lambda::Alias')) {
        const update = (alias as { UpdatePolicy?: Record<string, any> }).UpdatePolicy?.CodeDeployLambdaAliasUpdate;
        if (!update || r.render(update.DeploymentGroupName) !== groupName) continue;
        const aliasArn = r.ref(aliasId);
        const grants = ['lambda:GetAlias', 'lambda:UpdateAlias'].map((action) => asRole(action, aliasArn));
        this.add({
          kind: 'CodeDeploy → alias',
          from,
          to: r.endpoint(aliasId),
          detail: 'lambda:GetAlias, lambda:UpdateAlias',
          grantedBy: [...new Set(grants.flatMap((g) => g.grantedBy))],
          problems: [...new Set(grants.flatMap((g) => g.problems))],
        });
        for (const hook of ['BeforeAllowTrafficHook', 'AfterAllowTrafficHook'] as const) {
          if (update[hook] === undefined) continue;
          const hookName = r.render(update[hook]);
          if (hookName === '') continue;
          const target = { name: parseLambdaTarget(hookName)?.name ?? hookName };
          const invoke = asRole('lambda:InvokeFunction', r.lambdaArn(target.name));
          this.add({ kind: 'CodeDeploy → hook', from, to: this.lambdaEndpoint(target), detail: hook, ...invoke });
          this.hookEdges(target, groupId, r.render(update.ApplicationName), HOOK_CALLS[hook]);
        }
      }
    }
  }

  /**
   * A hook reads the deployment and tells CodeDeploy whether to go on: an edge for each of its calls, to the
   * deployment group they concern.
   */
  private hookEdges(target: LambdaTarget, groupId: string, applicationName: string, calls: readonly string[]): void {
    const r = this.reader;
    const functionId = r.functionIdNamed(target.name);
    const resource = r.arn('codedeploy', `deploymentgroup:${applicationName}/${r.ref(groupId)}`);
    for (const action of calls) {
      if (functionId === undefined) {
        this.add({
          kind: 'hook → CodeDeploy',
          from: { id: target.name, label: target.name },
          to: r.endpoint(groupId),
          detail: action,
          outside: true,
        });
        continue;
      }
      const role = this.functionRole(functionId);
      const { allowedBy, problems } = this.roleMay(role, action, resource, "the hook's role");
      this.add({ kind: 'hook → CodeDeploy', from: role.endpoint, to: r.endpoint(groupId), detail: action, grantedBy: allowedBy, problems });
    }
  }

  // EventBridge: a rule invokes its Lambda targets through their resource policy; a schedule through its role.

  private ruleEdges(): void {
    const r = this.reader;
    for (const [ruleId, rule] of r.ofType('AWS::Events::Rule')) {
      for (const ruleTarget of asArray(rule.Properties?.Targets)) {
        const target = parseLambdaTarget(r.render((ruleTarget as { Arn?: unknown }).Arn));
        if (!target) continue;
        const ruleArn = r.getAtt(ruleId, 'Arn');
        this.invokeEdge(
          'EventBridge rule → Lambda',
          r.endpoint(ruleId),
          'lambda:InvokeFunction',
          target,
          'events.amazonaws.com',
          [ruleArn],
          r.ref(ruleId),
        );
      }
    }
  }

  private scheduleEdges(): void {
    const r = this.reader;
    for (const [scheduleId, schedule] of r.ofType('AWS::Scheduler::Schedule')) {
      const p = schedule.Properties ?? {};
      const target = parseLambdaTarget(r.render(p.Target?.Arn));
      if (!target) continue;
      const group = r.arn('scheduler', `schedule-group/${r.render(p.GroupName ?? 'default')}`);
      const role = this.serviceRole(p.Target?.RoleArn, 'scheduler.amazonaws.com', {
        'aws:SourceAccount': r.target.account,
        'aws:SourceArn': group,
      });
      const { allowedBy, problems } = this.roleMay(
        role,
        'lambda:InvokeFunction',
        r.lambdaArn(target.name, target.qualifier),
        `its role ${role.label}`,
      );
      this.add({
        kind: 'EventBridge Scheduler → Lambda',
        from: r.endpoint(scheduleId),
        to: this.lambdaEndpoint(target),
        detail: 'lambda:InvokeFunction',
        grantedBy: allowedBy.map((by) => `${by} of role ${role.label}`),
        problems,
      });
    }
  }

  /**
   * Whether a role's policies let it do `action` on `resource`; `who` names the role in the refusal. An action
   * that takes no resource type is asked of "*", which only a statement on "*" grants.
   */
  private roleMay(role: { statements: readonly Sourced[]; problems: string[] }, action: string, resource: string, who: string) {
    if (role.problems.length > 0) return { allowedBy: [], problems: role.problems };
    const asked = WITHOUT_RESOURCE_TYPE.has(action) ? '*' : resource;
    const decision = this.evaluator.evaluate(role.statements, { action, resource: asked, context: {} }, false);
    return {
      allowedBy: decision.allowedBy,
      problems: [
        ...decision.problems,
        ...(decision.allowed
          ? []
          : [`${who} may not ${action} on ${asked}${asked === resource ? '' : ', the only resource the action takes'}`]),
      ],
    };
  }

  /** A role a service assumes: its trust policy must let the service in, and its policies are returned. */
  private serviceRole(roleArn: unknown, service: string, context: Request['context']) {
    const r = this.reader;
    const role = this.roleWithArn(r.render(roleArn));
    const label = role.endpoint.label;
    if (role.id === undefined) return { ...role, label };
    const trust = asArray(r.props(role.id).AssumeRolePolicyDocument?.Statement).map((statement) => ({
      statement: statement as Statement,
      source: `trust policy of ${label}`,
    }));
    const assumed = this.evaluator.evaluate(
      trust,
      { service, action: 'sts:AssumeRole', resource: r.getAtt(role.id, 'Arn'), context },
      true,
    );
    if (!assumed.allowed) role.problems.push(...assumed.problems, `${service} may not assume its role ${label}`);
    return { ...role, label };
  }

  /** The role with this ARN and every statement of its policies. */
  private roleWithArn(arn: string): { id?: string; endpoint: Endpoint; statements: Sourced[]; problems: string[] } {
    const r = this.reader;
    const id = r.ofType('AWS::IAM::Role').find(([roleId]) => r.getAtt(roleId, 'Arn') === arn)?.[0];
    if (id === undefined)
      return { endpoint: { id: arn, label: arn }, statements: [], problems: [`its role ${arn} is not in the template`] };
    return { id, endpoint: r.endpoint(id), ...this.identityStatements(id) };
  }

  /** Every statement of a role's policies: inline, attached from the template, and the AWS managed ones the graph knows. */
  private identityStatements(roleId: string): { statements: Sourced[]; problems: string[] } {
    const r = this.reader;
    const roleName = r.ref(roleId);
    const problems: string[] = [];
    const documentStatements = (document: any, source: string): Sourced[] =>
      asArray(document?.Statement).map((statement) => ({ statement: statement as Statement, source }));
    const attachedTo = (resource: CfnResourceJson) => asArray(resource.Properties?.Roles).some((role) => r.render(role) === roleName);
    const statements = [
      ...asArray(r.props(roleId).Policies).flatMap((policy: any) =>
        documentStatements(policy.PolicyDocument, `inline policy ${r.render(policy.PolicyName)}`),
      ),
      ...r
        .ofType('AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy')
        .filter(([, policy]) => attachedTo(policy))
        .flatMap(([id, policy]) => documentStatements(policy.Properties?.PolicyDocument, `policy ${r.endpoint(id).label}`)),
    ];
    for (const arn of asArray(r.props(roleId).ManagedPolicyArns).map((value) => r.render(value))) {
      const inTemplate = r.ofType('AWS::IAM::ManagedPolicy').find(([id]) => r.ref(id) === arn);
      if (inTemplate) {
        if (!attachedTo(inTemplate[1]))
          statements.push(...documentStatements(inTemplate[1].Properties?.PolicyDocument, `policy ${r.endpoint(inTemplate[0]).label}`));
        continue;
      }
      const awsManaged = /^arn:[^:]+:iam::aws:policy\/(.+)$/.exec(arn)?.[1];
      const known = awsManaged === undefined ? undefined : AWS_MANAGED_POLICIES[awsManaged];
      if (known) statements.push(...known.map((statement) => ({ statement, source: `AWS managed policy ${awsManaged}` })));
      else problems.push(`its role has managed policy ${arn}, whose statements the graph does not know`);
    }
    return { statements, problems };
  }

  private functionRole(functionId: string) {
    return this.roleWithArn(this.reader.render(this.reader.props(functionId).Role));
  }

  // Function role → the tables, indexes, secrets and functions its environment names (no more, no less) and its log group.

  private functionRoleEdges(): void {
    const r = this.reader;
    const tables = r.ofType('AWS::DynamoDB::Table', 'AWS::DynamoDB::GlobalTable').map(([id, table]) => {
      const arn = r.getAtt(id, 'Arn');
      const indexes = [...asArray(table.Properties?.GlobalSecondaryIndexes), ...asArray(table.Properties?.LocalSecondaryIndexes)].map(
        (index) => r.render((index as { IndexName: unknown }).IndexName),
      );
      return { id, name: r.ref(id), arn, indexes, endpoint: r.endpoint(id), outside: false };
    });
    tables.push(...this.tablesNamedOutside(tables.map((table) => table.arn)));
    const secrets = r.ofType('AWS::SecretsManager::Secret').map(([id]) => ({ id, arn: r.ref(id) }));

    for (const [functionId, fn] of r.ofType('AWS::Lambda::Function')) {
      const role = this.functionRole(functionId);
      const environment = Object.values(fn.Properties?.Environment?.Variables ?? {}).map((value) => r.render(value));
      const actionsIn = (statement: Statement, family: string) =>
        asArray(statement.Action)
          .map((action) => r.render(action))
          .filter((action) => action === '*' || action.toLowerCase().startsWith(`${family}:`));
      const granted = (family: string, resource: string) =>
        role.statements.filter(
          ({ statement }) =>
            statement.Effect === 'Allow' &&
            actionsIn(statement, family).length > 0 &&
            asArray(statement.Resource).some((pattern) => arnLike(r.render(pattern), resource)),
        );
      const actionsOf = (found: Sourced[], family: string) =>
        [...new Set(found.flatMap(({ statement }) => actionsIn(statement, family)))].sort();
      const wildcards = (actions: string[], family: string) =>
        actions
          .filter((action) => action.includes('*'))
          .map((action) => `${action} grants every ${family} action it matches, not the ones the code calls`);
      /** An edge to "any other" resource of a kind, when the role's grants reach one the template does not hold. */
      const addGrantBeyondTemplate = (kind: EdgeKind, family: string, resource: string, noun: string, nouns: string) => {
        const found = granted(family, r.arn(family, resource));
        if (found.length === 0) return;
        this.add({
          kind,
          from: role.endpoint,
          to: { id: '*', label: `any other ${noun}` },
          detail: actionsOf(found, family).join(', '),
          grantedBy: found.map(({ source }) => source),
          problems: [`the grant reaches ${nouns} outside the template: more than the function uses`],
        });
      };

      // Tables: used when the environment names them; every grant must fall on a used table or its indexes.
      for (const table of tables) {
        const used = environment.some((value) => value.includes(table.name) || value.includes(table.arn));
        const subjects = [
          { resource: table.arn, label: 'the table' },
          ...table.indexes.map((index) => ({ resource: `${table.arn}/index/${index}`, label: `index ${index}` })),
          { resource: `${table.arn}/index/${token('another index')}`, label: 'every index' },
          { resource: `${table.arn}/stream/${token('stream')}`, label: 'its stream' },
        ];
        const grants = subjects
          .map((subject) => ({ ...subject, found: granted('dynamodb', subject.resource) }))
          .filter(({ found }) => found.length > 0);
        if (!used && grants.length === 0) continue;
        const found = grants.flatMap((grant) => grant.found);
        const actions = actionsOf(found, 'dynamodb');
        const problems = [...wildcards(actions, 'DynamoDB')];
        // Using a table is using its indexes (the environment names tables, not indexes); its stream is another matter.
        if (!used) problems.push("granted, but the function's environment names no such table: the grant is more than it uses");
        else if (grants.length === 0) problems.push('its environment names the table, but its role may do nothing on it or its indexes');
        if (grants.some((grant) => grant.label === 'its stream'))
          problems.push("the grant reaches the table's stream, which the function does not read");
        this.add({
          kind: 'function → table',
          from: role.endpoint,
          to: table.endpoint,
          detail: `${actions.join(', ') || 'nothing'} on ${grants.map((g) => g.label).join(', ') || 'nothing'}`,
          grantedBy: [...new Set(found.map(({ source }) => source))],
          problems: [...role.problems, ...new Set(problems)],
          ...(table.outside ? { outside: true } : {}),
        });
      }
      addGrantBeyondTemplate('function → table', 'dynamodb', `table/${token('another table')}`, 'table', 'tables');

      // Secrets: a dynamic reference is resolved by CloudFormation at deploy time and needs no grant; an
      // ARN in the environment is read at run time and needs secretsmanager:GetSecretValue on that secret.
      for (const secret of secrets) {
        const atDeploy = environment.some((value) => value.includes(`{{resolve:secretsmanager:${secret.arn}`));
        const atRunTime = environment.some((value) => value.replaceAll(`{{resolve:secretsmanager:${secret.arn}`, '').includes(secret.arn));
        const found = granted('secretsmanager', secret.arn);
        if (!atDeploy && !atRunTime && found.length === 0) continue;
        const actions = actionsOf(found, 'secretsmanager');
        const problems = [...wildcards(actions, 'Secrets Manager')];
        if (atRunTime) {
          const read = this.evaluator.evaluate(
            role.statements,
            { action: 'secretsmanager:GetSecretValue', resource: secret.arn, context: {} },
            false,
          );
          problems.push(...read.problems);
          if (!read.allowed) problems.push('its environment names the secret, but its role may not secretsmanager:GetSecretValue on it');
        } else if (found.length > 0) {
          problems.push(
            atDeploy
              ? 'CloudFormation resolves the secret at deploy time: the function never calls Secrets Manager, so the grant is more than it uses'
              : "granted, but the function's environment names no such secret: the grant is more than it uses",
          );
        }
        this.add({
          kind: 'function → secret',
          from: role.endpoint,
          to: r.endpoint(secret.id),
          detail: atRunTime
            ? `${actions.join(', ')} at run time`
            : atDeploy
              ? 'resolved by CloudFormation at deploy time'
              : actions.join(', '),
          grantedBy:
            atDeploy && !atRunTime && found.length === 0
              ? ['a CloudFormation dynamic reference']
              : [...new Set(found.map(({ source }) => source))],
          problems: [...role.problems, ...new Set(problems)],
        });
      }
      addGrantBeyondTemplate('function → secret', 'secretsmanager', `secret:${token('another secret')}`, 'secret', 'secrets');

      // Functions: invoked when the environment names them (the hook's checks, the deployment traffic), by any of
      // their names: unqualified, an alias, a version. Every grant must fall on a function the environment names.
      for (const [otherId] of r.ofType('AWS::Lambda::Function')) {
        if (otherId === functionId) continue;
        const arn = r.getAtt(otherId, 'Arn');
        const used = environment.some((value) => value.includes(r.ref(otherId)));
        const names = [
          { resource: arn, label: 'unqualified' },
          { resource: `${arn}:live`, label: 'its live alias' },
          { resource: `${arn}:${token('version')}`, label: 'its versions' },
        ];
        const invocable = names.filter(
          ({ resource }) =>
            this.evaluator.evaluate(role.statements, { action: 'lambda:InvokeFunction', resource, context: {} }, false).allowed,
        );
        if (!used && invocable.length === 0) continue;
        const found = names.flatMap(({ resource }) => granted('lambda', resource));
        const problems = [...wildcards(actionsOf(found, 'lambda'), 'Lambda')];
        if (!used) problems.push("granted, but the function's environment names no such function: the grant is more than it uses");
        else if (invocable.length === 0)
          problems.push('its environment names the function, but its role may not lambda:InvokeFunction on it');
        this.add({
          kind: 'function → function',
          from: role.endpoint,
          to: r.endpoint(otherId),
          detail: `lambda:InvokeFunction on ${invocable.map(({ label }) => label).join(', ') || 'nothing'}`,
          grantedBy: [...new Set(found.map(({ source }) => source))],
          problems: [...role.problems, ...new Set(problems)],
        });
      }
      addGrantBeyondTemplate('function → function', 'lambda', `function:${token('another function')}`, 'function', 'functions');

      this.logGroupEdge(functionId, role);
    }
  }

  /**
   * Tables a function's role names by a literal ARN in the stack's own account and region, not defined in
   * the template (a restored table the stage points at by name): walked like the template's tables, with
   * the indexes the grants name, and listed as outside the template since the table itself is not here.
   */
  private tablesNamedOutside(templateTableArns: readonly string[]) {
    const r = this.reader;
    const prefix = r.arn('dynamodb', 'table/');
    const indexesByName = new Map<string, Set<string>>();
    for (const [functionId] of r.ofType('AWS::Lambda::Function')) {
      for (const { statement } of this.functionRole(functionId).statements) {
        for (const resource of asArray(statement.Resource).map((value) => r.render(value))) {
          const match = resource.startsWith(prefix)
            ? /^([A-Za-z0-9_.-]{3,255})(?:\/index\/([A-Za-z0-9_.-]+))?$/.exec(resource.slice(prefix.length))
            : null;
          if (!match || templateTableArns.includes(`${prefix}${match[1]}`)) continue;
          const indexes = indexesByName.get(match[1]!) ?? new Set<string>();
          if (match[2] !== undefined) indexes.add(match[2]);
          indexesByName.set(match[1]!, indexes);
        }
      }
    }
    return [...indexesByName].map(([name, indexes]) => ({
      id: `${prefix}${name}`,
      name,
      arn: `${prefix}${name}`,
      indexes: [...indexes].sort(),
      endpoint: { id: `${prefix}${name}`, label: `table ${name}` },
      outside: true,
    }));
  }

  /** Lambda writes a function's logs with the function's role: to its own log group, or /aws/lambda/<name>. */
  private logGroupEdge(functionId: string, role: ReturnType<GraphBuilder['functionRole']>): void {
    const r = this.reader;
    const configured = r.props(functionId).LoggingConfig?.LogGroup;
    const name = configured === undefined ? `/aws/lambda/${r.nameOf(functionId)}` : r.render(configured);
    const logGroupId = r.ofType('AWS::Logs::LogGroup').find(([id]) => r.ref(id) === name)?.[0];
    const resource = r.arn('logs', `log-group:${name}:log-stream:${token('stream')}`);
    const decisions = ['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
      action,
      decision: this.evaluator.evaluate(role.statements, { action, resource, context: {} }, false),
    }));
    this.add({
      kind: 'function → log group',
      from: role.endpoint,
      to: logGroupId === undefined ? { id: name, label: name } : r.endpoint(logGroupId),
      detail: 'logs:CreateLogStream, logs:PutLogEvents',
      grantedBy: [...new Set(decisions.flatMap(({ decision }) => decision.allowedBy))],
      problems: [
        ...role.problems,
        ...decisions.flatMap(({ action, decision }) => [
          ...decision.problems,
          ...(decision.allowed ? [] : [`its role may not ${action}: the function's logs are lost`]),
        ]),
      ],
    });
  }
}
