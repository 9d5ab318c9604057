import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests one connection may have waiting; one more closes it. Node parses ahead of the answers without
 * bound (the socket's parser cannot be paused through a public API), so without a bound a client that
 * pipelines without reading queues without end, and the queue's clean-up on close blocks every client.
 */
export const MAX_WAITING_PER_CONNECTION = 256;

/** One connection's requests: whether one is being handled, and those waiting behind it. */
interface Turns {
  busy: boolean;
  readonly waiting: Array<() => void>;
}

/**
 * Takes the requests of one connection one at a time: a request pipelined behind another (RFC 9112
 * §9.3.2) is handled once the answer before it is complete, so it sees what that request did, as it
 * would have had its client waited. Node already sends the answers in order; this orders the work.
 * Requests still waiting when their connection goes are dropped unanswered, like any abandoned request;
 * so are those of a connection closed for having MAX_WAITING_PER_CONNECTION waiting.
 */
export function takeInTurn(listener: RequestListener): RequestListener {
  const connections = new WeakMap<Socket, Turns>();
  const turnsOf = (socket: Socket): Turns => {
    const turns = connections.get(socket) ?? { busy: false, waiting: [] };
    connections.set(socket, turns);
    return turns;
  };
  return (req, res) => {
    const socket = req.socket;
    const turns = turnsOf(socket);
    const take = () => {
      turns.busy = true;
      // 'close' comes once the answer is complete, or once the connection is gone (then destroyed).
      res.once('close', () => {
        turns.busy = false;
        if (!socket.destroyed) turns.waiting.shift()?.();
      });
      try {
        listener(req, res);
      } catch {
        // A listener that throws ends its own exchange, never the process nor its neighbours' turns.
        res.destroy();
      }
    };
    if (!turns.busy) return take();
    if (turns.waiting.length >= MAX_WAITING_PER_CONNECTION) {
      // A client this far ahead is not reading its answers: its waiting requests go unanswered, as on any close.
      turns.waiting.length = 0;
      socket.destroy();
      return;
    }
    turns.waiting.push(take);
  };
}
