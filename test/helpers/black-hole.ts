import { createServer, type Socket } from 'node:net';

export interface BlackHole {
  /** http://127.0.0.1:<port>: accepts connections, reads what is sent, never answers. */
  readonly endpoint: string;
  /** Connections accepted so far: one per SDK attempt, since a timed-out attempt's socket is destroyed. */
  readonly connections: number;
  close(): Promise<void>;
}

/**
 * A server that accepts TCP connections and never answers: the store that hangs, which no timeout
 * arithmetic can stand in for. Only a client pointed at it shows whether a time budget is real.
 */
export async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((socket) => {
    connections++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
