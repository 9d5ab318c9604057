import type { RequestListener } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Requests one connection may have waiting before the server stops reading from it. Node parses ahead of
 * the answers (its own pause watches only the bytes of answers queued, and these wait unanswered), so
 * without a bound a client that pipelines without reading would queue without end.
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
 *
 * With MAX_WAITING_PER_CONNECTION waiting, the connection is paused until an answer makes room: TCP holds
 * the client's next requests, and every request read is answered. The read Node is parsing still hands
 * over the requests it holds, so at most one read's worth (64 KiB) more wait. Requests still waiting when
 * their connection goes are dropped unanswered, like any abandoned request.
 */
export function takeInTurn(listener: RequestListener): RequestListener {
  const connections = new WeakMap<Socket, Turns>();
  const turnsOf = (socket: Socket): Turns => {
    const known = connections.get(socket);
    if (known !== undefined) return known;
    const turns: Turns = { busy: false, waiting: [] };
    connections.set(socket, turns);
    // Node resumes the socket itself (as a request's body is read or dumped, or once answers drain):
    // paused again while the bound is reached.
    socket.on('resume', () => {
      if (turns.waiting.length >= MAX_WAITING_PER_CONNECTION) socket.pause();
    });
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
        if (socket.destroyed) return;
        const next = turns.waiting.shift();
        if (turns.waiting.length === MAX_WAITING_PER_CONNECTION - 1) socket.resume();
        next?.();
      });
      try {
        listener(req, res);
      } catch {
        // A listener that throws ends its own exchange, never the process nor its neighbours' turns.
        res.destroy();
      }
    };
    if (!turns.busy) return take();
    turns.waiting.push(take);
    if (turns.waiting.length >= MAX_WAITING_PER_CONNECTION) socket.pause();
  };
}
