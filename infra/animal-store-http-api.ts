import { Aws, Duration, Fn, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CfnAuthorizer,
  CfnIntegration,
  CfnRoute,
  type CfnStage,
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  HttpNoneAuthorizer,
  HttpRoute,
  HttpRouteKey,
  HttpStage,
  LogGroupLogDestination,
  type CorsPreflightOptions,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { ApiFunctionName } from '../shared/facts/function-names';
import { AUTHORIZER_SETTINGS, BASE_PATH, preflightRoute, routeKey, routes } from '../shared/facts/routes';
import { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, type CorsConfig } from '../shared/http/cors-policy';
import { ApiDomain } from './api-domain';
import type { DomainConfig, ThrottleConfig, ThrottledRoute } from './stages';

export interface AnimalStoreHttpApiProps {
  /**
   * Each function (alias) behind the API, by its name: each operation's serves its route, routeNotFound every
   * request no route matches and CORS preflights when CORS is on, and the authorizer fronts every route but the preflight.
   */
  readonly functions: ReadonlyMap<ApiFunctionName, IFunction>;
  /** Each route's throttle; together they bound the whole API. */
  readonly throttle: ThrottleConfig;
  /** Browser origins allowed to call the API; none when empty. */
  readonly cors: CorsConfig;
  /** Retention of the access log. */
  readonly logRetention: RetentionDays;
  /** What happens to the access log group when it leaves the stack. */
  readonly removalPolicy: RemovalPolicy;
  /** The custom domain serving the API; the execute-api endpoint is turned off when set. */
  readonly domain?: DomainConfig;
}

/**
 * One access log line per request, as JSON. It carries the authorizer's verdict and key id, so a
 * 401 or a suspicious client can be traced to a key without logging the key itself.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  userAgent: '$context.identity.userAgent',
  httpMethod: '$context.httpMethod',
  path: '$context.path',
  routeKey: '$context.routeKey',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  authorizerOutcome: '$context.authorizer.outcome',
  keyId: '$context.authorizer.keyId',
  authorizerError: '$context.authorizer.error',
  // The authorizer version that gave the verdict: each version's refusals are judged apart (infra/version-alarms.ts).
  authorizerVersion: '$context.authorizer.version',
  error: '$context.error.message',
} as const;

/**
 * The HTTP API: every route of the route table plus `$default`, all Lambda integrations behind the
 * Lambda authorizer (checked at synthesis).
 */
export class AnimalStoreHttpApi extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  /** The custom domain, when the stage has one. */
  readonly domain?: ApiDomain;
  /** The URL clients use, ending in `/v1`: on the custom domain when there is one. */
  readonly baseUrl: string;

  constructor(scope: Construct, id: string, props: AnimalStoreHttpApiProps) {
    super(scope, id);

    this.httpApi = new HttpApi(this, 'HttpApi', {
      // Tells the stages apart in the console; API names need not be unique.
      apiName: Stack.of(this).stackName,
      description: `Animal store API (${Stack.of(this).stackName})`,
      // Our own stage below: the default one cannot carry throttling or access logs.
      createDefaultStage: false,
      corsPreflight: corsPreflight(props.cors),
      // With a domain, clients must use it: the generated URL changes whenever the API is re-created,
      // so nobody should come to depend on it.
      disableExecuteApiEndpoint: props.domain !== undefined,
    });

    // Under /aws/vendedlogs/, which needs no entry in the account's size-capped CloudWatch Logs resource
    // policy. The stack-id suffix gives a re-created stack its own group beside a retained old one.
    this.accessLogs = new LogGroup(this, 'AccessLogs', {
      logGroupName: `${accessLogGroupPrefix(Stack.of(this).stackName)}access-${stackCreationId()}`,
      retention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    this.stage = new HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      autoDeploy: true,
      // Applies to a route without a setting of its own, which the check below rules out.
      throttle: props.throttle.routeNotFound,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    if (props.domain) {
      this.domain = new ApiDomain(this, 'Domain', { domain: props.domain, httpApi: this.httpApi, stage: this.stage });
      this.baseUrl = `https://${props.domain.domainName}${BASE_PATH}`;
    } else {
      this.baseUrl = `${this.stage.url}${BASE_PATH.slice(1)}`;
    }

    const functionNamed = (name: ApiFunctionName): IFunction => {
      const fn = props.functions.get(name);
      if (!fn) throw new Error(`No function ${name} for the API of ${this.node.path}`);
      return fn;
    };
    const authorizer = new HttpLambdaAuthorizer('ApiKeyAuthorizer', functionNamed('authorizer'), {
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      identitySource: [...AUTHORIZER_SETTINGS.identitySource],
      resultsCacheTtl: Duration.seconds(AUTHORIZER_SETTINGS.resultsCacheTtlSeconds),
    });

    /** The route key of each route this construct adds, and whose share of the throttle it gets. */
    const throttled = new Map<string, ThrottledRoute>();
    for (const route of routes) {
      this.httpApi.addRoutes({
        path: BASE_PATH + route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.operationId}Integration`, functionNamed(route.operationId)),
        authorizer,
      });
      throttled.set(routeKey(route), route.operationId);
    }

    // Every other method and path, so unknown requests get our 404/405 Error body, not API Gateway's.
    throttled.set(HttpRouteKey.DEFAULT.key, 'routeNotFound');
    new HttpRoute(this, 'DefaultRoute', {
      httpApi: this.httpApi,
      routeKey: HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('RouteNotFoundIntegration', functionNamed('routeNotFound')),
      authorizer,
    });

    if (props.cors.allowOrigins.length > 0) {
      const preflight = new HttpRoute(this, 'PreflightRoute', {
        httpApi: this.httpApi,
        // AWS documents this route for exactly this case (HTTP API CORS with an authorizer on $default).
        routeKey: HttpRouteKey.with(preflightRoute.path, HttpMethod.OPTIONS),
        integration: new HttpLambdaIntegration('PreflightIntegration', functionNamed('routeNotFound')),
        authorizer: new HttpNoneAuthorizer(),
      });
      throttled.set(preflightRoute.routeKey, 'preflight');
      Validations.of(preflight).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Browsers send CORS preflights without credentials, so this OPTIONS route cannot be authorized. It reads and ' +
          'writes nothing: API Gateway answers preflights from the CORS configuration, and the routeNotFound function behind ' +
          'it answers anything that reaches it 204 with no body.',
      });
    }

    removeIdentitySource(this.httpApi);
    throttleEachRoute(this.stage, throttled, props.throttle);
    this.node.addValidation({ validate: () => [...unguardedRoutes(this.httpApi), ...unthrottledRoutes(this.httpApi, throttled)] });
  }
}

/** Where every access log group a stack ever had is found: `aws logs describe-log-groups --log-group-name-prefix <this>`. */
export function accessLogGroupPrefix(stackName: string): string {
  return `/aws/vendedlogs/apigateway/${stackName}/`;
}

/** The first group of the stack id's UUID: new with each creation of the stack, known only at deploy time. */
function stackCreationId(): string {
  const uuid = Fn.select(2, Fn.split('/', Aws.STACK_ID));
  return Fn.select(0, Fn.split('-', uuid));
}

/**
 * Every route but the preflight one must be a Lambda proxy integration behind our authorizer: a
 * route added any other way (an HTTP proxy, no authorizer) would serve anonymous callers.
 */
function unguardedRoutes(api: HttpApi): string[] {
  const stack = Stack.of(api);
  // Routes and integrations of this API wherever they were added, not only inside this construct.
  const ofThisApi = stack.node.findAll().filter((child) => (child as { apiId?: string }).apiId === api.apiId);
  const integrationTypes = new Map(
    ofThisApi
      .filter((child): child is CfnIntegration => child instanceof CfnIntegration)
      .map((integration) => [stack.getLogicalId(integration), integration.integrationType]),
  );
  return ofThisApi
    .filter((child): child is CfnRoute => child instanceof CfnRoute)
    .flatMap((route) => {
      const problems: string[] = [];
      if (route.routeKey !== preflightRoute.routeKey && route.authorizationType !== 'CUSTOM') {
        problems.push(`Route ${route.routeKey} is not behind the Lambda authorizer (${route.authorizationType ?? 'NONE'}).`);
      }
      const target = JSON.stringify(stack.resolve(route.target));
      const type = [...integrationTypes].find(([id]) => target.includes(`"${id}"`))?.[1];
      if (type !== 'AWS_PROXY') problems.push(`Route ${route.routeKey} does not invoke a Lambda function (${type ?? 'no integration'}).`);
      return problems;
    });
}

/**
 * Gives every route its own share of the throttle, as a stage's default applies to each route separately.
 * The stage depends on the routes: API Gateway refuses settings for a route key it does not know yet.
 */
function throttleEachRoute(stage: HttpStage, throttled: ReadonlyMap<string, ThrottledRoute>, throttle: ThrottleConfig): void {
  const settings = Object.fromEntries(
    [...throttled].map(([key, route]) => [
      key,
      { ThrottlingRateLimit: throttle[route].rateLimit, ThrottlingBurstLimit: throttle[route].burstLimit },
    ]),
  );
  (stage.node.defaultChild as CfnStage).routeSettings = settings;
  const ofThisApi = Stack.of(stage)
    .node.findAll()
    .filter((child): child is CfnRoute => child instanceof CfnRoute);
  for (const route of ofThisApi.filter((child) => child.apiId === stage.api.apiId)) stage.node.addDependency(route);
}

/** A route added any other way would be throttled by the stage's default alone, on top of the stated cap. */
function unthrottledRoutes(api: HttpApi, throttled: ReadonlyMap<string, ThrottledRoute>): string[] {
  return Stack.of(api)
    .node.findAll()
    .filter((child): child is CfnRoute => child instanceof CfnRoute && child.apiId === api.apiId)
    .filter((route) => !throttled.has(route.routeKey))
    .map(
      (route) =>
        `Route ${route.routeKey} has no share of the stage's throttle (its function's throttle in shared/catalog/function-catalog.ts).`,
    );
}

function corsPreflight(cors: CorsConfig): CorsPreflightOptions | undefined {
  // No origin configured, no CORS headers: browsers then refuse cross-origin calls, as intended.
  if (cors.allowOrigins.length === 0) return undefined;
  return {
    allowOrigins: [...cors.allowOrigins],
    allowMethods: CORS_ALLOW_METHODS.map((method) => CorsHttpMethod[method]),
    allowHeaders: [...CORS_ALLOW_HEADERS],
    exposeHeaders: [...CORS_EXPOSE_HEADERS],
    maxAge: Duration.seconds(cors.maxAgeSeconds),
  };
}

/**
 * Removes the authorizer's identity source (see AUTHORIZER_SETTINGS in shared/facts/routes.ts): HttpLambdaAuthorizer
 * falls back to the Authorization header or renders `[]`, and only a missing property means none.
 */
function removeIdentitySource(api: HttpApi): void {
  if (AUTHORIZER_SETTINGS.identitySource.length > 0) return;
  const authorizers = api.node.findAll().filter((child): child is CfnAuthorizer => child instanceof CfnAuthorizer);
  if (authorizers.length !== 1) throw new Error(`Expected one authorizer on the API, found ${authorizers.length}`);
  authorizers[0]!.addPropertyDeletionOverride('IdentitySource');
}
