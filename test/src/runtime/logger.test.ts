import { describe, expect, it } from 'vitest';
import { Logger } from '../../../src/runtime/logger';
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

  it("merges an entry's own keys and keeps a note as `extra`", () => {
    const { out } = written((logger) => {
      logger.info('with keys', { outcome: 'allowed' });
      logger.info('with a note', 'just this');
    }, 'INFO');
    expect(out[0]).toEqual(expect.objectContaining({ outcome: 'allowed' }));
    expect(out[1]).toEqual(expect.objectContaining({ extra: 'just this' }));
  });
});
