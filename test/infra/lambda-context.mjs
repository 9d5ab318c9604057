// The context object Lambda's Node.js runtime hands a handler, built from the environment Lambda
// sets (AWS_LAMBDA_FUNCTION_NAME, its memory, and the function's timeout as FUNCTION_TIMEOUT_MS).
// Plain JavaScript: the bundle check's runner (lambda-runner.ts) and the benchmark's warm runner
// (bench/warm-runner.mjs) load it in a bare Node, with nothing compiled.

/** The context of one invocation, its clock starting now. */
export function lambdaContext(awsRequestId, logStreamName) {
  const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME;
  const deadline = Date.now() + Number(process.env.FUNCTION_TIMEOUT_MS);
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}
