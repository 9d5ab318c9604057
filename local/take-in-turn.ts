import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';

/** One connection's requests: whether one is being handled, and those waiting behind it. */
interface Turns {
  busy: boolean;
  readonly waiting: Array<() => void>;
}

/**
 * Takes the requests of one connection one at a time: a request pipelined behind another (RFC 9112
 * §9.3.2) is handled once the answer before it is complete, so it sees what that request did, as it
 * would have had its client waited. Node already sends the answers in order; this orders the work.
 * Requests still waiting when their connection goes are dropped unanswered, like any abandoned request.
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
    if (turns.busy) turns.waiting.push(take);
    else take();
  };
}
