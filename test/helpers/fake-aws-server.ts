import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fake AWS service's server on a free loopback port: the endpoint to point the SDK at, and how to stop it. */
export async function listenOnLoopback(server: Server): Promise<{ endpoint: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Text inside an element of a Query-protocol answer (CloudFormation, SNS). */
export function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
