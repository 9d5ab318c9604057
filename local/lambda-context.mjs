// The context object Lambda's Node.js runtime hands a handler, for everything that invokes handlers
// outside Lambda. Plain JavaScript, typed by lambda-context.d.mts, so a bare Node can load it.

/** The context of one invocation, its clock starting now. */
export function createLambdaContext({
  functionName,
  memoryLimitInMB,
  timeoutMs,
  awsRequestId,
  logStreamName,
  functionVersion = '$LATEST',
  region = 'us-east-1',
  accountId = '123456789012',
}) {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion,
    invokedFunctionArn: `arn:aws:lambda:${region}:${accountId}:function:${functionName}`,
    memoryLimitInMB: String(memoryLimitInMB),
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

/**
 * The context of one invocation in a process given a function's environment as Lambda sets it
 * (AWS_LAMBDA_FUNCTION_NAME, AWS_LAMBDA_FUNCTION_MEMORY_SIZE, AWS_LAMBDA_FUNCTION_VERSION) plus its timeout as FUNCTION_TIMEOUT_MS.
 */
export function lambdaContextFromEnvironment(awsRequestId, logStreamName) {
  return createLambdaContext({
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    timeoutMs: Number(process.env.FUNCTION_TIMEOUT_MS),
    awsRequestId,
    logStreamName,
    functionVersion: process.env.AWS_LAMBDA_FUNCTION_VERSION ?? '$LATEST',
  });
}
