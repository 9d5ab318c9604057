import { CfnOutput, Duration, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { LambdaDeploymentConfig } from 'aws-cdk-lib/aws-codedeploy';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { metricsNamespace } from '../shared/facts/metric-names';
import { ApiFunctions } from './api-functions';
import { CursorSecret } from './cursor-secret';
import { Dashboard } from './dashboard';
import { Monitoring } from './monitoring';
import { AnimalStoreHttpApi } from './animal-store-http-api';
import { isExampleDomain, isExampleEmail, isExampleZoneId, isPlaceholderAccount } from './placeholders';
import { PreTrafficChecks } from './pre-traffic-checks';
import { RELEASE_KIND_OUTPUT, WAY_BACK, type ReleaseKind } from './release-kind';
import type { StageConfig } from './stages';
import { SyntheticProbe } from './scheduled-probe';
import { ApiKeysTable, IdempotencyTable, PetsTable } from './tables';
import { TrafficShifting } from './traffic-shifting';
import { DeploymentTraffic } from './traffic-during-deployment';
import { VersionAlarms } from './version-alarms';

export interface AnimalStoreStackProps extends Omit<StackProps, 'env'> {
  /** The stage this stack deploys; everything stage-specific, its account and region included, comes from here. */
  readonly stage: StageConfig;
  /**
   * A release built to roll back or restore while an alarm fires: every function moves at once and CodeDeploy
   * ignores the alarms, which would otherwise stop the deployment. The next ordinary release turns them back on.
   */
  readonly emergency?: boolean;
}

/** One self-contained deployment of the animal store, pinned to its stage's account and region; nothing is shared between stages. */
export class AnimalStoreStack extends Stack {
  /** The stage this stack deploys. */
  readonly config: StageConfig;
  readonly petsTable: PetsTable;
  readonly apiKeysTable: ApiKeysTable;
  readonly idempotencyTable: IdempotencyTable;
  readonly functions: ApiFunctions;
  readonly api: AnimalStoreHttpApi;
  readonly monitoring: Monitoring;
  /** Each function's new version judged against its old one: the only alarms that roll a deployment back. */
  readonly versionAlarms: VersionAlarms;
  readonly trafficShifting: TrafficShifting;
  /** Sends each deployment's new version requests of its own, and holds the deployment open to bake. */
  readonly deploymentTraffic: DeploymentTraffic;
  /** Exercises each function's new version before CodeDeploy moves traffic to it. */
  readonly preTrafficChecks: PreTrafficChecks;
  /** Calls the stage's URL on a schedule, so an outage is noticed when no client is calling. */
  readonly syntheticProbe: SyntheticProbe;
  readonly dashboard: Dashboard;
  /** Lets an operator run `npm run keys -- --stage <stage>`: attach it to their role or group. */
  readonly keyAdministrationPolicy: ManagedPolicy;
  /** Lets an operator (or a pipeline) run `npm run smoke -- --stage <stage>`, which deletes its own pet. */
  readonly smokeTestPolicy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: AnimalStoreStackProps) {
    super(scope, id, {
      description: `Animal store API, ${props.stage.name} stage`,
      stackName: props.stage.stackName,
      terminationProtection: props.stage.terminationProtection,
      ...props,
      env: { account: props.stage.account, region: props.stage.region },
    });
    const { stage } = props;
    if (stage.requiresAlarmSubscription && stage.alarmSubscriptions.length === 0) {
      throw new Error(
        `The ${stage.name} stage's alarms would reach nobody: set alarmSubscriptions of ${stage.name} in infra/stages.ts ` +
          `to an e-mail address ({ email: '<on-call address>' }) or an existing SNS topic ({ topicArn: 'arn:aws:sns:…' }).`,
      );
    }
    // In a real account the examples would deploy and then fail there, or page nobody: refuse them here instead.
    this.node.addValidation({ validate: () => exampleValueProblems(stage) });
    this.config = stage;
    Tags.of(this).add('application', 'animal-store');
    Tags.of(this).add('stage', stage.name);

    const removalPolicy = stage.retainsData ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY;
    const data = { removalPolicy, deletionProtection: stage.deletionProtection };
    this.petsTable = new PetsTable(this, 'Pets', {
      ...data,
      ...(stage.restoredPetsTable === undefined ? {} : { restored: stage.restoredPetsTable }),
    });
    this.apiKeysTable = new ApiKeysTable(this, 'ApiKeys', data);
    this.idempotencyTable = new IdempotencyTable(this, 'Idempotency');
    const cursorSecret = new CursorSecret(this, 'CursorSecret', {
      removalPolicy,
      generation: stage.cursorSecretGeneration,
    });

    this.functions = new ApiFunctions(this, 'Functions', {
      petsTable: this.petsTable,
      apiKeysTable: this.apiKeysTable,
      idempotencyTable: this.idempotencyTable,
      cursorSecret,
      listing: stage.listing,
      memoryMiB: stage.memoryMiB,
      logLevel: stage.logLevel,
      metricsNamespace: metricsNamespace(stage.name),
      ...(stage.authorizerReservedConcurrency === undefined ? {} : { authorizerReservedConcurrency: stage.authorizerReservedConcurrency }),
      logRetention: stage.logRetention,
      removalPolicy,
    });

    const aliases = new Map([...this.functions.byName].map(([name, fn]) => [name, fn.alias]));
    const lambdas = new Map([...this.functions.byName].map(([name, fn]) => [name, fn.function]));

    // API Gateway invokes the `live` aliases, never the functions' latest code: CodeDeploy decides
    // when a new version takes traffic.
    this.api = new AnimalStoreHttpApi(this, 'Api', {
      functions: aliases,
      throttle: stage.throttle,
      cors: stage.cors,
      logRetention: stage.logRetention,
      removalPolicy,
      domain: stage.domain,
    });

    // The pets table in use, the restored one during a restore: its alarms and graphs follow it by name.
    const tables = new Map<string, ITableV2>([
      ['Pets', this.petsTable.table],
      ['ApiKeys', this.apiKeysTable.table],
      ['Idempotency', this.idempotencyTable.table],
    ]);
    const indexNames = new Map([
      ['Pets', this.petsTable.indexNames],
      ['ApiKeys', ApiKeysTable.indexNames],
    ]);
    const watched = {
      api: this.api.httpApi,
      functions: lambdas,
      tables,
      indexes: new Map(
        [...indexNames].flatMap(([name, indexes]) =>
          indexes.map((indexName) => [`${name} ${indexName}`, { table: tables.get(name)!, indexName }] as const),
        ),
      ),
    };
    this.monitoring = new Monitoring(this, 'Monitoring', {
      ...watched,
      accessLogs: this.api.accessLogs,
      metricsNamespace: metricsNamespace(stage.name),
      thresholds: stage.alarms,
      subscriptions: stage.alarmSubscriptions,
    });
    this.versionAlarms = new VersionAlarms(this, 'VersionAlarms', {
      functions: new Map(
        [...this.functions.byName].map(([name, fn]) => [name, { function: fn.function, version: fn.function.currentVersion.version }]),
      ),
      thresholds: stage.alarms,
      metricsNamespace: metricsNamespace(stage.name),
      accessLogs: this.api.accessLogs,
      alarmActions: this.monitoring.alarmActions,
    });
    this.trafficShifting = new TrafficShifting(this, 'TrafficShifting', {
      aliases,
      // Every stage by the same canary (shared/facts/deployment.ts), so staging's deploys rehearse production's,
      // rollback included; an emergency release all at once, since its alarms are not watched.
      deploymentConfig: props.emergency ? LambdaDeploymentConfig.ALL_AT_ONCE : LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES,
      ignoreAlarms: props.emergency === true,
      rollbackAlarmsFor: (name) => this.versionAlarms.byFunction.get(name)!,
    });
    this.deploymentTraffic = new DeploymentTraffic(this, 'DeploymentTraffic', {
      aliases,
      memoryMiB: stage.memoryMiB.deploymentTraffic,
      logLevel: stage.logLevel,
      metricsNamespace: metricsNamespace(stage.name),
      logRetention: stage.logRetention,
      removalPolicy,
    });
    // An emergency release keeps the hook, which finds nothing to bake there, so going back from it moves no function.
    this.deploymentTraffic.bake(this.trafficShifting.deploymentGroups.values());
    this.preTrafficChecks = new PreTrafficChecks(this, 'PreTrafficChecks', {
      functions: lambdas,
      deploymentTraffic: this.deploymentTraffic.function,
      apiKeysTable: this.apiKeysTable,
      memoryMiB: stage.memoryMiB.preTrafficHook,
      logLevel: stage.logLevel,
      logRetention: stage.logRetention,
      removalPolicy,
    });
    // Every alarm period holds one run, and the probe's alarm counts periods as the stage's others do.
    this.syntheticProbe = new SyntheticProbe(this, 'SyntheticProbe', {
      baseUrl: this.api.baseUrl,
      interval: Duration.minutes(stage.alarms.periodMinutes),
      datapointsToAlarm: stage.alarms.datapointsToAlarm,
      evaluationPeriods: stage.alarms.evaluationPeriods,
      alarmActions: this.monitoring.alarmActions,
      metricsNamespace: metricsNamespace(stage.name),
      memoryMiB: stage.memoryMiB.syntheticProbe,
      logLevel: stage.logLevel,
      logRetention: stage.logRetention,
      removalPolicy,
    });
    this.preTrafficChecks.gate([...aliases].map(([name, alias]) => ({ group: this.trafficShifting.deploymentGroups.get(name)!, alias })));
    this.dashboard = new Dashboard(this, 'Dashboard', {
      ...watched,
      metricsNamespace: metricsNamespace(stage.name),
      alarms: [...this.versionAlarms.alarms, ...this.monitoring.alarms, this.syntheticProbe.alarm],
      accessLog: this.monitoring.accessLog,
      emergency: props.emergency === true,
    });

    // How the operator tools find a stage's tables and URL: the stack's outputs.
    const readOutputs = new PolicyStatement({ actions: ['cloudformation:DescribeStacks'], resources: [this.stackId] });
    this.keyAdministrationPolicy = new ManagedPolicy(this, 'KeyAdministrationPolicy', {
      description: `Issue, list and revoke API keys of the ${stage.name} stage with npm run keys.`,
      statements: [...this.apiKeysTable.keyAdministrationStatements(), readOutputs],
    });
    this.smokeTestPolicy = new ManagedPolicy(this, 'SmokeTestPolicy', {
      description: `Run npm run smoke against the ${stage.name} stage: it deletes the one pet it created.`,
      statements: [new PolicyStatement({ actions: ['dynamodb:DeleteItem'], resources: [this.petsTable.table.tableArn] }), readOutputs],
    });

    // What `npm run smoke -- --stage` and the console show: a stage left on an emergency release says so.
    const releaseKind: ReleaseKind = props.emergency ? 'emergency' : 'ordinary';
    new CfnOutput(this, RELEASE_KIND_OUTPUT, {
      value: releaseKind,
      description: props.emergency
        ? `An emergency release: every function moves at once and no alarm rolls a deployment back. Way back: ${WAY_BACK}.`
        : 'An ordinary release: each function moves by the canary, and its alarms roll a deployment back.',
    });
    new CfnOutput(this, 'BaseUrl', { value: this.api.baseUrl, description: 'Base URL of the API; every path is under it.' });
    if (this.api.domain) {
      // What DNS outside the stack (another account's zone, another provider) points the domain at.
      new CfnOutput(this, 'DomainTarget', {
        value: this.api.domain.domainName.regionalDomainName,
        description: "The custom domain's API Gateway target: a CNAME to it, or a Route 53 alias with DomainTargetHostedZoneId.",
      });
      new CfnOutput(this, 'DomainTargetHostedZoneId', {
        value: this.api.domain.domainName.regionalHostedZoneId,
        description: 'The hosted zone id of DomainTarget, for a Route 53 alias record.',
      });
    }
    new CfnOutput(this, 'ApiKeysTableName', {
      value: this.apiKeysTable.table.tableName,
      description: 'The --table of `npm run keys` (create, list, revoke API keys).',
    });
    new CfnOutput(this, 'PetsTableName', { value: this.petsTable.table.tableName, description: 'The pets table in use.' });
    new CfnOutput(this, 'Region', { value: this.region, description: 'The --region of `npm run keys`.' });
    new CfnOutput(this, 'KeyAdministrationPolicyArn', {
      value: this.keyAdministrationPolicy.managedPolicyArn,
      description: 'Managed policy for `npm run keys -- --stage`: attach it to the operators who manage API keys.',
    });
    new CfnOutput(this, 'SmokeTestPolicyArn', {
      value: this.smokeTestPolicy.managedPolicyArn,
      description: 'Managed policy for `npm run smoke -- --stage`: attach it to whoever (or whatever pipeline) runs the smoke test.',
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.monitoring.topic.topicArn,
      description: 'Every alarm of the stage notifies this topic.',
    });
    new CfnOutput(this, 'DashboardName', {
      value: this.dashboard.dashboard.dashboardName,
      description: "The stage's CloudWatch dashboard.",
    });
    new CfnOutput(this, 'ProbeApiKeySecretArn', {
      value: this.syntheticProbe.apiKeySecret.secretArn,
      description: "Where the synthetic probe reads its API key: store a key of this stage here (docs/operations.md, 'Synthetic probe').",
    });
    new CfnOutput(this, 'CursorSecretArn', {
      value: cursorSecret.secret.secretArn,
      description: 'Secret that signs pagination cursors; rotate it with cursorSecretGeneration in infra/stages.ts.',
    });
  }
}

/**
 * The example values (infra/placeholders.ts) a stage still carries while it deploys to a real account,
 * one sentence per field saying what to put there; none for a placeholder account, which never deploys.
 */
function exampleValueProblems(stage: StageConfig): string[] {
  if (isPlaceholderAccount(stage.account)) return [];
  const field = (path: string, value: string) =>
    `${stage.name}.${path} in infra/stages.ts is the example ${JSON.stringify(value)}, but the stage deploys to account ${stage.account}`;
  const problems: string[] = [];
  const { domain } = stage;
  if (domain && isExampleDomain(domain.domainName)) {
    problems.push(
      `${field('domain.domainName', domain.domainName)}: the name never resolves, so its certificate would never validate and ` +
        'the first deploy would roll back. Put the host your clients call there, or remove domain to serve the generated URL.',
    );
  }
  if (domain?.hostedZone && isExampleZoneId(domain.hostedZone.hostedZoneId)) {
    problems.push(
      `${field('domain.hostedZone.hostedZoneId', domain.hostedZone.hostedZoneId)}: Route 53 has no such zone. Put the id of ` +
        'the public hosted zone holding the domain there (aws route53 list-hosted-zones).',
    );
  }
  if (domain?.hostedZone && isExampleDomain(domain.hostedZone.zoneName)) {
    problems.push(
      `${field('domain.hostedZone.zoneName', domain.hostedZone.zoneName)}: nobody can own that zone. Put the name of the ` +
        'public hosted zone holding the domain there.',
    );
  }
  stage.alarmSubscriptions.forEach((subscription, index) => {
    if ('email' in subscription && isExampleEmail(subscription.email)) {
      problems.push(
        `${field(`alarmSubscriptions[${index}].email`, subscription.email)}: nobody reads that address, so its alarms would ` +
          "reach nobody. Put the on-call address there, or an existing SNS topic ({ topicArn: 'arn:aws:sns:…' }).",
      );
    }
  });
  return problems;
}
