import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Starts a server on a port and resolves with the port it got (0 picks a free one). A port in use
 * fails with the name of the setting that moves it, which is what the developer needs to know.
 */
export async function listen(server: Server, port: number, host: string, portSetting: string): Promise<number> {
  server.listen(port, host);
  await Promise.race([
    once(server, 'listening'),
    once(server, 'error').then(([error]) => {
      throw (error as NodeJS.ErrnoException).code === 'EADDRINUSE'
        ? new Error(`Port ${port} is in use: set ${portSetting} to a free port.`)
        : error;
    }),
  ]);
  return (server.address() as AddressInfo).port;
}
