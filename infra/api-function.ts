import { join } from 'node:path';
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias, ApplicationLogLevel, Architecture, LoggingFormat, Runtime, SystemLogLevel } from 'aws-cdk-lib/aws-lambda';
import { LogLevel as EsbuildLogLevel, NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { FUNCTIONS_DIR, PROJECT_ROOT } from '../shared/facts/project-layout';
import { ENV } from '../shared/facts/environment';
import { fileNameOf, type ApiFunctionName, type FunctionName } from '../shared/facts/function-names';
import { dynamoDbCallBudgetMs } from '../shared/dynamodb/dynamodb-client';
import { API_GATEWAY_AUTHORIZER_TIMEOUT_MS, API_GATEWAY_INTEGRATION_TIMEOUT_MS, FUNCTION_TIMEOUT_MS } from '../shared/facts/time-budget';
import { RESPONSE_RESERVE_MS } from '../shared/runtime/deadline';
import { FUNCTION_CONFIG, variablesOf } from '../shared/runtime/function-config';
import { refuseInvalidConfig } from './config-refusal';

/** The Lambda runtime; the bundle check loads bundles in a Node of the same major version. */
export const FUNCTION_RUNTIME = Runtime.NODEJS_24_X;

/** The alias API Gateway invokes; CodeDeploy moves it from one version to the next (infra/traffic-shifting.ts). */
export const LIVE_ALIAS_NAME = 'live';

/**
 * What a bundle's modules written as ES modules read as `import.meta.url`, which CommonJS lacks: the bundle's own
 * URL, for shared/runtime/stack-traces.ts to find its source map beside it.
 */
const IMPORT_META_URL = 'importMetaUrl';

/**
 * The esbuild choices that shape what a function loads at cold start, shared with the bench's floors for a fair
 * comparison. CommonJS, so the bundle requires Node's built-ins: an ES-module bundle imports them, and Node
 * then builds an ES-module wrapper of each (http's loads undici, fetch and WebSocket, which nothing calls).
 */
export const BUNDLE_SHAPE = {
  format: OutputFormat.CJS,
  /** The file NodejsFunction writes for the format, which Lambda's runtime requires. */
  file: 'index.js',
  minify: true,
  // ES-module builds first: esbuild tree-shakes them, where the SDK's CommonJS builds bring every command.
  mainFields: ['module', 'main'],
  // The SDK's `import("node:http")` as a require, which CommonJS output otherwise leaves to Node's ES-module loader.
  supported: { 'dynamic-import': false },
  define: { 'import.meta.url': IMPORT_META_URL },
  // Strict first, as esbuild writes it below: a banner line before its "use strict" would leave the bundle sloppy.
  banner: `'use strict';var ${IMPORT_META_URL}=require('node:url').pathToFileURL(__filename).href;`,
} as const;

export interface ApiFunctionProps {
  /** Which function it is: its entry point (functions/), and the configuration its environment is checked against at synthesis. */
  readonly name: ApiFunctionName;
  /** A value for each variable the stage sets on its functions: this one gets those its configuration reads (environmentOf). */
  readonly stageValues: Readonly<Record<string, string>>;
  /** Memory in MB; also scales the function's CPU share. */
  readonly memoryMiB: number;
  /** Application log level: Lambda's filter and the functions' logger (POWERTOOLS_LOG_LEVEL) alike. */
  readonly logLevel: LogLevel;
  /** CloudWatch namespace of the function's business metrics (POWERTOOLS_METRICS_NAMESPACE), for a function that publishes them. */
  readonly metricsNamespace: string;
  /** Concurrent executions reserved for this function; none when undefined. */
  readonly reservedConcurrency?: number;
  /** Retention of the function's log group. */
  readonly logRetention: RetentionDays;
  /** What happens to the log group when it leaves the stack. */
  readonly removalPolicy: RemovalPolicy;
}

/** Log levels the functions accept in POWERTOOLS_LOG_LEVEL (shared/runtime/logger.ts) that Lambda's application log level also knows. */
export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/**
 * One handler of functions/ as a Lambda function, with its own log group, a role that may write only
 * there until granted more, and the `live` alias, so a new version takes traffic only when CodeDeploy shifts it.
 */
export class ApiFunction extends Construct {
  readonly function: NodejsFunction;
  /** What API Gateway invokes: the version CodeDeploy last promoted. */
  readonly alias: Alias;
  readonly logGroup: LogGroup;
  readonly role: Role;

  constructor(scope: Construct, id: string, props: ApiFunctionProps) {
    super(scope, id);
    assertTimeBudget();

    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    // Our own role instead of the default one: AWSLambdaBasicExecutionRole lets a function write to
    // any log group in the account, this one only to its own.
    this.role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    this.logGroup.grantWrite(this.role);

    const environment = environmentOf(props.name, {
      [ENV.logLevel]: props.logLevel,
      [ENV.metricsNamespace]: props.metricsNamespace,
      ...props.stageValues,
    });
    this.function = new NodejsFunction(this, 'Function', {
      ...functionDefaults(props.name, props.logLevel),
      memorySize: props.memoryMiB,
      timeout: Duration.millis(FUNCTION_TIMEOUT_MS),
      role: this.role,
      logGroup: this.logGroup,
      ...(props.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrency }),
      environment,
    });
    refuseInvalidConfig(this.function, FUNCTION_CONFIG[props.name], environment);

    this.alias = new Alias(this, 'Live', { aliasName: LIVE_ALIAS_NAME, version: this.function.currentVersion });
  }
}

/**
 * Lambda's system log level for every function of every stage. At WARN, Lambda logs no platform.start and
 * platform.report lines: what they held, and where else it is, is in docs/observability.md.
 */
export const SYSTEM_LOG_LEVEL: keyof typeof SystemLogLevel = 'WARN';

/**
 * A function's environment: each variable its configuration reads that the stage gives a value, and no
 * other, so what a function is told is what it reads (shared/runtime/function-config.ts).
 */
export function environmentOf(name: FunctionName, stageValues: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(variablesOf(name).flatMap((variable) => (variable in stageValues ? [[variable, stageValues[variable]!]] : [])));
}

/**
 * What every function of the stack shares, whoever deploys it. JSON logging makes Lambda's own lines
 * (at WARN, only what went wrong, such as a timeout) JSON too, so one query language reads the whole log.
 */
export function functionDefaults(name: FunctionName, logLevel: LogLevel) {
  return {
    entry: join(PROJECT_ROOT, FUNCTIONS_DIR, `${fileNameOf(name)}.ts`),
    handler: 'handler',
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
    runtime: FUNCTION_RUNTIME,
    architecture: Architecture.ARM_64,
    loggingFormat: LoggingFormat.JSON,
    applicationLogLevelV2: ApplicationLogLevel[logLevel],
    systemLogLevelV2: SystemLogLevel[SYSTEM_LOG_LEVEL],
    bundling: functionBundling(),
  } as const;
}

/** How every function of the stack is bundled: BUNDLE_SHAPE, source maps beside the bundle, the SDK inside it. */
function functionBundling(): BundlingOptions {
  return {
    format: BUNDLE_SHAPE.format,
    minify: BUNDLE_SHAPE.minify,
    mainFields: [...BUNDLE_SHAPE.mainFields],
    esbuildArgs: Object.fromEntries(Object.entries(BUNDLE_SHAPE.supported).map(([feature, on]) => [`--supported:${feature}`, String(on)])),
    define: BUNDLE_SHAPE.define,
    banner: BUNDLE_SHAPE.banner,
    // Warnings and errors only: esbuild's per-bundle size summary is noise; `npm run bench` reports sizes.
    logLevel: EsbuildLogLevel.WARNING,
    // Not loaded at cold start: shared/runtime/stack-traces.ts reads it when an error is logged.
    sourceMap: true,
    // Stack traces need the mappings, not the sources: keeps the uploaded asset small.
    sourcesContent: false,
    // The SDK is bundled, not taken from the runtime, so the version we test is the one that runs and
    // the bundle check can prove the asset loads with nothing but itself.
    bundleAwsSDK: true,
    externalModules: [],
    // Source paths relative to the repository, so every machine synthesizes the same asset hashes.
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_inputDir, outputDir) => [
        `node "${join(PROJECT_ROOT, 'infra', 'normalize-source-map.mjs')}" "${join(outputDir, `${BUNDLE_SHAPE.file}.map`)}"`,
      ],
    },
  };
}

/** Throws when the SDK settings in shared/dynamodb/dynamodb-client.ts no longer fit inside the function timeout. */
function assertTimeBudget(): void {
  const sdk = dynamoDbCallBudgetMs();
  const fn = FUNCTION_TIMEOUT_MS;
  if (!(sdk + RESPONSE_RESERVE_MS < fn && fn <= API_GATEWAY_AUTHORIZER_TIMEOUT_MS && fn < API_GATEWAY_INTEGRATION_TIMEOUT_MS)) {
    throw new Error(
      `Inconsistent time budget: the DynamoDB SDK may take ${sdk} ms (+${RESPONSE_RESERVE_MS} ms to answer), ` +
        `the functions time out after ${fn} ms, API Gateway waits ${API_GATEWAY_AUTHORIZER_TIMEOUT_MS} ms for the ` +
        `authorizer and ${API_GATEWAY_INTEGRATION_TIMEOUT_MS} ms for an integration.`,
    );
  }
}
