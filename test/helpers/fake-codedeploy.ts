import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PutLifecycleEventHookExecutionStatusCommandInput } from '@aws-sdk/client-codedeploy';
import type { CodeDeployApi, LambdaApi } from '../../functions/pre-traffic-hook/pre-traffic-run';
import type { CallOptions } from '../../shared/checks/direct-invocation';
import type { ApiKeyStore } from '../../shared/domain/auth/api-key-store';
import { createAuthenticator } from '../../shared/domain/auth/authenticate';
import type { AuthorizerContext } from '../../shared/domain/auth/authorizer-context';
import { API_FUNCTIONS, type ApiFunctionName } from '../../shared/facts/function-names';

/** Each function behind the API's deployed name in a stack, as the hook's and the deployment traffic's configuration give them. */
export const DEPLOYED_NAMES = Object.fromEntries(API_FUNCTIONS.map((fn) => [fn, `AnimalStore-Staging-${fn}-A1B2C3`])) as Record<
  ApiFunctionName,
  string
>;

/** Which function a deployed name is. */
export const FUNCTION_DEPLOYED_AS: ReadonlyMap<string, ApiFunctionName> = new Map(
  Object.entries(DEPLOYED_NAMES).map(([fn, name]) => [name, fn as ApiFunctionName]),
);

/** One Lambda deployment's target as CodeDeploy describes it: the function, the version its alias moves to and the one it serves now. */
export interface FakeTarget {
  readonly functionName?: string;
  readonly targetVersion?: string;
  /** The version the alias serves now: FAKE_CURRENT_VERSION unless given; null for none. */
  readonly currentVersion?: string | null;
}

/** The version a fake deployment's alias serves before it moves, unless its target says otherwise. */
export const FAKE_CURRENT_VERSION = '1';

export interface FakeCodeDeploy {
  /** Answers as CodeDeploy's API does for one deployment of these targets. */
  readonly api: CodeDeployApi;
  /** Every status the hook reported, in order. */
  readonly reports: PutLifecycleEventHookExecutionStatusCommandInput[];
}

export interface FakeCodeDeployOptions {
  /** The call that fails, as CodeDeploy failing or refusing it would. */
  readonly failing?: keyof CodeDeployApi;
}

/** CodeDeploy for one deployment in progress, as the hook sees it: its targets, and a place to report. */
export function fakeCodeDeploy(deploymentId: string, targets: readonly FakeTarget[], options: FakeCodeDeployOptions = {}): FakeCodeDeploy {
  const reports: PutLifecycleEventHookExecutionStatusCommandInput[] = [];
  const refuse = (call: keyof CodeDeployApi) => {
    if (options.failing === call)
      throw Object.assign(new Error(`User is not authorized to perform: codedeploy:${call}`), { name: 'AccessDeniedException' });
  };
  const known = (id: string | undefined) => {
    if (id !== deploymentId)
      throw Object.assign(new Error(`The deployment ${id} could not be found.`), { name: 'DeploymentDoesNotExistException' });
  };
  const api: CodeDeployApi = {
    async listDeploymentTargets(input) {
      refuse('listDeploymentTargets');
      known(input.deploymentId);
      return { targetIds: targets.map((target, index) => target.functionName ?? `target-${index}`) };
    },
    async getDeploymentTarget(input) {
      refuse('getDeploymentTarget');
      known(input.deploymentId);
      const index = targets.findIndex((target, i) => (target.functionName ?? `target-${i}`) === input.targetId);
      const target = targets[index];
      if (target === undefined)
        throw Object.assign(new Error(`No target ${input.targetId}`), { name: 'DeploymentTargetDoesNotExistException' });
      return {
        deploymentTarget: {
          deploymentTargetType: 'LambdaTarget',
          lambdaTarget: {
            deploymentId,
            targetId: input.targetId,
            status: 'InProgress',
            lambdaFunctionInfo: {
              functionName: target.functionName,
              functionAlias: 'live',
              ...(target.currentVersion === null ? {} : { currentVersion: target.currentVersion ?? FAKE_CURRENT_VERSION }),
              targetVersion: target.targetVersion,
            },
          },
        },
      };
    },
    async putLifecycleEventHookExecutionStatus(input) {
      refuse('putLifecycleEventHookExecutionStatus');
      known(input.deploymentId);
      reports.push(input);
      return { lifecycleEventHookExecutionId: input.lifecycleEventHookExecutionId };
    },
  };
  return { api, reports };
}

/** One call of the Lambda API: the function, the qualifier and the event, decoded. */
export interface InvokeCall {
  readonly functionName: string | undefined;
  readonly qualifier: string | undefined;
  readonly event: unknown;
}

/** What the Lambda API gives back for one invocation, as the SDK does: Lambda's `FunctionError` and the payload as JSON. */
export type FakeAnswer = { readonly payload: unknown; readonly functionError?: string } | { readonly throws: Error } | 'never';

export interface FakeLambdaOptions {
  /** What an asynchronous invocation (InvocationType 'Event') meets instead of being queued. */
  readonly queueing?: { readonly throws: Error } | 'never';
}

export interface FakeLambda {
  readonly api: LambdaApi;
  /** Every invocation that waited for its answer (RequestResponse), in order. */
  readonly calls: InvokeCall[];
  /** Every asynchronous invocation (InvocationType 'Event') Lambda queued, in order. */
  readonly queued: InvokeCall[];
}

/**
 * Lambda's Invoke, answering each call with the next answer `answerFor` gives; 'never' waits until the caller
 * gives up. An asynchronous invocation is queued, as Lambda does, without waiting for the function.
 */
export function fakeLambda(answerFor: (call: InvokeCall) => FakeAnswer | Promise<FakeAnswer>, options: FakeLambdaOptions = {}): FakeLambda {
  const calls: InvokeCall[] = [];
  const queued: InvokeCall[] = [];
  const never = (signal: AbortSignal) =>
    new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(Object.assign(new Error('Request aborted'), { name: 'AbortError' }))),
    );
  const api: LambdaApi = {
    async invoke(input, callOptions) {
      const call = {
        functionName: input.FunctionName,
        qualifier: input.Qualifier,
        event: JSON.parse(new TextDecoder().decode(input.Payload as Uint8Array)),
      };
      if (input.InvocationType === 'Event') {
        if (options.queueing === 'never') return never(callOptions.abortSignal);
        if (options.queueing !== undefined) throw options.queueing.throws;
        queued.push(call);
        return {};
      }
      calls.push(call);
      const answer = await answerFor(call);
      if (answer === 'never') return never(callOptions.abortSignal);
      if ('throws' in answer) throw answer.throws;
      return {
        ...(answer.functionError === undefined ? {} : { FunctionError: answer.functionError }),
        Payload: new TextEncoder().encode(JSON.stringify(answer.payload)),
      };
    },
  };
  return { api, calls, queued };
}

/** The bearer key of an authorizer event, as functions/authorizer.ts reads it. */
export function authorizationOf(call: InvokeCall): string | undefined {
  return (call.event as { headers?: Record<string, string> }).headers?.authorization;
}

/**
 * An authorizer version as functions/authorizer.ts is: the domain's verdict on the call's key, looked up in
 * the keys table; `regression` turns the verdict into what a broken version answers.
 */
export function authorizerOver(
  keys: ApiKeyStore,
  regression: (verdict: AuthorizerContext) => AuthorizerContext = (verdict) => verdict,
): (call: InvokeCall) => Promise<FakeAnswer> {
  const authenticate = createAuthenticator(keys);
  return async (call) => ({ payload: { isAuthorized: true, context: regression(await authenticate(authorizationOf(call))) } });
}

export interface AwsEndpoint {
  /** Where the SDK's CodeDeploy and Lambda clients send their requests (AWS_ENDPOINT_URL_CODEDEPLOY, AWS_ENDPOINT_URL_LAMBDA). */
  readonly endpoint: string;
  close(): Promise<void>;
}

/**
 * CodeDeploy's and Lambda's HTTP APIs on loopback, as the SDK speaks them (CodeDeploy: JSON 1.1 with
 * an `X-Amz-Target`; Lambda: `POST /2015-03-31/functions/{name}/invocations?Qualifier=`), answered
 * by the fakes above: a bundle using the real SDK clients meets the same deployment as a unit test.
 */
export async function serveAwsApis(codeDeploy: CodeDeployApi, lambda: LambdaApi): Promise<AwsEndpoint> {
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const options = { abortSignal: new AbortController().signal };
    const target = request.headers['x-amz-target'];
    const url = new URL(request.url ?? '/', 'http://localhost');
    try {
      if (typeof target === 'string' && target.startsWith('CodeDeploy_20141006.')) {
        const operation = target.slice('CodeDeploy_20141006.'.length);
        const method = (operation[0]!.toLowerCase() + operation.slice(1)) as keyof CodeDeployApi;
        const call = codeDeploy[method] as (input: unknown, options: CallOptions) => Promise<unknown>;
        const output = await call.call(codeDeploy, JSON.parse(body.toString('utf8')), options);
        response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(output));
        return;
      }
      const invocation = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec(url.pathname);
      if (request.method === 'POST' && invocation) {
        const qualifier = url.searchParams.get('Qualifier');
        const FunctionName = decodeURIComponent(invocation[1]!);
        if (request.headers['x-amz-invocation-type'] === 'Event') {
          // Queued, not run: Lambda answers 202 with no payload.
          await lambda.invoke({ FunctionName, InvocationType: 'Event', Payload: body }, options);
          response.writeHead(202, { 'content-type': 'application/json' }).end();
          return;
        }
        const answer = await lambda.invoke(
          { FunctionName, ...(qualifier === null ? {} : { Qualifier: qualifier }), Payload: body },
          options,
        );
        const headers: Record<string, string> = { 'content-type': 'application/json', 'x-amz-executed-version': qualifier ?? '$LATEST' };
        if (answer.FunctionError !== undefined) headers['x-amz-function-error'] = answer.FunctionError;
        response.writeHead(200, headers).end(Buffer.from(answer.Payload ?? new Uint8Array()));
        return;
      }
      response.writeHead(404, { 'x-amzn-errortype': 'UnknownOperationException' }).end('{}');
    } catch (error) {
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      response
        .writeHead(400, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-errortype': name })
        .end(JSON.stringify({ __type: name, message }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
