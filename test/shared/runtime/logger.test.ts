import { describe, expect, it, vi } from 'vitest';
import { Logger, summarizeError } from '../../../shared/runtime/logger';
import { httpEvent, lambdaContext } from '../../../tools/lambda/events';
import { captureOutput } from '../../helpers/output';

/** What a logger wrote to stdout and to stderr, each line parsed. */
function written(log: (logger: Logger) => void, level: ConstructorParameters<typeof Logger>[1]) {
  const output = captureOutput({ silent: true });
  try {
    log(new Logger('test-service', level));
  } finally {
    output.stop();
  }
  const parse = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, any>);
  return { out: parse(output.byStream.stdout), err: parse(output.byStream.stderr) };
}

const context = {
  functionName: 'fn',
  awsRequestId: 'req-1',
  invokedFunctionArn: 'arn:aws:lambda:eu-west-1:1:function:fn',
  memoryLimitInMB: '512',
};

describe("the functions' logger", () => {
  it('writes one JSON line per entry at or above its level, warnings and errors to stderr', () => {
    const { out, err } = written((logger) => {
      logger.debug('hidden');
      logger.info('shown');
      logger.warn('warned');
      logger.error('failed');
    }, 'INFO');
    expect(out.map((entry) => [entry.level, entry.message])).toEqual([['INFO', 'shown']]);
    expect(err.map((entry) => [entry.level, entry.message])).toEqual([
      ['WARN', 'warned'],
      ['ERROR', 'failed'],
    ]);
    expect(out[0]).toEqual(expect.objectContaining({ service: 'test-service', timestamp: expect.any(String) }));
  });

  it('writes nothing when silent', () => {
    const { out, err } = written((logger) => logger.error('never'), 'SILENT');
    expect([...out, ...err]).toEqual([]);
  });

  it('carries the Lambda context and appended keys until they are reset, the first invocation marked cold', () => {
    const { out } = written((logger) => {
      logger.addContext(context);
      logger.appendKeys({ requestId: 'api-1' });
      logger.info('first');
      logger.resetKeys();
      logger.addContext({ ...context, awsRequestId: 'req-2' });
      logger.info('second');
    }, 'INFO');
    expect(out[0]).toEqual(
      expect.objectContaining({
        cold_start: true,
        function_name: 'fn',
        function_request_id: 'req-1',
        function_memory_size: 512,
        requestId: 'api-1',
      }),
    );
    expect(out[1]).toEqual(expect.objectContaining({ cold_start: false, function_request_id: 'req-2' }));
    expect(out[1]).not.toHaveProperty('requestId');
  });

  it('logs an error with its name, message, where it was thrown and its cause', () => {
    const { err } = written((logger) => logger.error('failed', new TypeError('outer', { cause: new RangeError('inner') })), 'INFO');
    expect(err[0]!.error).toEqual(
      expect.objectContaining({
        name: 'TypeError',
        message: 'outer',
        location: expect.stringMatching(/logger\.test\.ts:\d+$/),
        cause: expect.objectContaining({ name: 'RangeError', message: 'inner' }),
      }),
    );
  });

  it("summarizes an outage's error as its name, message and code and its causes', without a stack or a place", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4567'), { code: 'ECONNREFUSED' });
    const summary = summarizeError(new Error('The data store is throttling or unavailable', { cause: refused }));
    expect(summary).toEqual({
      name: 'Error',
      message: 'The data store is throttling or unavailable',
      cause: { name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:4567', code: 'ECONNREFUSED' },
    });
    expect(JSON.stringify(summarizeError(new Error('plain', { cause: 'a reason' })))).toBe(
      '{"name":"Error","message":"plain","cause":"a reason"}',
    );
  });

  it("merges an entry's own keys and keeps a note as `extra`", () => {
    const { out } = written((logger) => {
      logger.info('with keys', { outcome: 'allowed' });
      logger.info('with a note', 'just this');
    }, 'INFO');
    expect(out[0]).toEqual(expect.objectContaining({ outcome: 'allowed' }));
    expect(out[1]).toEqual(expect.objectContaining({ extra: 'just this' }));
  });

  describe('with invocations running at the same time', () => {
    /** A promise the test settles when it chooses, to interleave two invocations' steps. */
    function step() {
      let go!: () => void;
      const reached = new Promise<void>((resolve) => {
        go = resolve;
      });
      return { reached, go };
    }

    it("gives each entry its own invocation's keys, and work an invocation left running keeps them after it ended", async () => {
      const output = captureOutput({ silent: true });
      const logger = new Logger('test-service', 'INFO');
      const [first, second, leftRunning] = [step(), step(), step()];
      let abandoned: Promise<void> | undefined;
      try {
        const invoke = (requestId: string, keyId: string, waitFor: Promise<void>, andLeave?: Promise<void>) =>
          logger.runInvocation(async () => {
            logger.addContext({ ...context, awsRequestId: `invocation-${requestId}` });
            logger.appendKeys({ requestId });
            await waitFor;
            logger.appendKeys({ keyId });
            logger.error('failed');
            // Like a call abandoned at the deadline: it ends after its invocation has answered.
            if (andLeave) abandoned = andLeave.then(() => logger.error('late'));
          });
        const a = invoke('a', 'key_a', first.reached, leftRunning.reached);
        const b = invoke('b', 'key_b', second.reached);
        // b appends its keyId and logs while a is still waiting, then a does, then a's leftover logs during c.
        second.go();
        await b;
        first.go();
        await a;
        const c = logger.runInvocation(async () => {
          logger.appendKeys({ requestId: 'c', keyId: 'key_c' });
          leftRunning.go();
          await abandoned;
          logger.error('failed');
        });
        await c;
      } finally {
        output.stop();
      }
      const lines = output.json().map((entry) => [entry.message, entry.requestId, entry.keyId, entry.function_request_id]);
      expect(lines).toEqual([
        ['failed', 'b', 'key_b', 'invocation-b'],
        ['failed', 'a', 'key_a', 'invocation-a'],
        ['late', 'a', 'key_a', 'invocation-a'],
        ['failed', 'c', 'key_c', undefined],
      ]);
    });

    it("marks only the instance's first invocation as the cold start", async () => {
      const output = captureOutput({ silent: true });
      const logger = new Logger('test-service', 'INFO');
      try {
        for (const id of ['1', '2']) {
          await logger.runInvocation(async () => {
            logger.addContext({ ...context, awsRequestId: id });
            logger.info('ran');
          });
        }
      } finally {
        output.stop();
      }
      expect(output.json().map((entry) => entry.cold_start)).toEqual([true, false]);
    });

    it("writes each failed request's error line with that request's requestId and keyId", async () => {
      const [first, second] = [step(), step()];
      const waits: Record<string, Promise<void>> = { a: first.reached, b: second.reached };
      // The functions' own logger, made as its module loads: at a level that writes errors.
      vi.stubEnv('POWERTOOLS_LOG_LEVEL', 'ERROR');
      vi.resetModules();
      const { createHttpHandler } = await import('../../../shared/http/handler');
      vi.unstubAllEnvs();
      const handler = createHttpHandler(undefined, async (event) => {
        await waits[event.requestContext.requestId];
        throw new Error(`store broke for ${event.requestContext.requestId}`);
      });
      const eventFor = (requestId: string) => {
        const event = httpEvent({ authorizer: { outcome: 'allowed', keyId: `key_${requestId}` } });
        return { ...event, requestContext: { ...event.requestContext, requestId } };
      };
      const output = captureOutput({ silent: true });
      try {
        const answers = [handler(eventFor('a'), lambdaContext()), handler(eventFor('b'), lambdaContext())];
        second.go();
        await answers[1];
        first.go();
        expect((await Promise.all(answers)).map((answer) => answer.statusCode)).toEqual([500, 500]);
      } finally {
        output.stop();
      }
      const failures = output.json().filter((entry) => entry.message === 'Request failed');
      expect(failures.map((entry) => [entry.requestId, entry.keyId, (entry.error as { message: string }).message])).toEqual([
        ['b', 'key_b', 'store broke for b'],
        ['a', 'key_a', 'store broke for a'],
      ]);
    });
  });
});
