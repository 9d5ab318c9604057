// Stdout and stderr, intercepted where functions write them: file descriptors 1 and 2 through
// fs.writeSync (src/runtime/output.ts), and the process's two streams. One mechanism for the local
// runtime's function instances (local/function-instance.mjs), the bench's warm runner and the tests'
// output capture. Plain JavaScript, typed by output-interception.d.mts: the two runners load it in a
// bare Node, with nothing compiled.
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

/**
 * Calls `observe(stream, bytes)` with every write to stdout or stderr until the returned function is
 * called. A write goes on as it was made (to the descriptor, or to the stream) unless `swallow`, and
 * is observed once it has: a direct write a full non-blocking pipe refused, and that src/runtime/output.ts
 * then hands to the stream, is seen once, as the stream's.
 */
export function interceptOutput(observe, { swallow = false } = {}) {
  const streams = { stdout: process.stdout, stderr: process.stderr };
  const writes = { stdout: streams.stdout.write, stderr: streams.stderr.write };
  const writeSync = fs.writeSync;
  fs.writeSync = (fd, buffer, ...rest) => {
    if (fd !== 1 && fd !== 2) return writeSync(fd, buffer, ...rest);
    const name = fd === 1 ? 'stdout' : 'stderr';
    const offset = typeof buffer !== 'string' && typeof rest[0] === 'number' ? rest[0] : 0;
    const bytes =
      typeof buffer === 'string' ? Buffer.from(buffer) : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength).subarray(offset);
    const written = swallow ? bytes.length : writeSync(fd, bytes);
    observe(name, bytes.subarray(0, written));
    return written;
  };
  // Node's documented way to patch a built-in for ES module importers as well.
  syncBuiltinESMExports();
  for (const name of ['stdout', 'stderr']) {
    streams[name].write = (chunk, ...rest) => {
      observe(name, typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
      if (!swallow) return writes[name].call(streams[name], chunk, ...rest);
      rest.find((argument) => typeof argument === 'function')?.();
      return true;
    };
  }
  return () => {
    fs.writeSync = writeSync;
    syncBuiltinESMExports();
    streams.stdout.write = writes.stdout;
    streams.stderr.write = writes.stderr;
  };
}
