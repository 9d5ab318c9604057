import type { IncomingMessage, RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests one connection may have waiting before the server stops reading from it. Node parses ahead of
 * the answers (its own pause watches only the bytes of answers queued, and these wait unanswered), so
 * without a bound a client that pipelines without reading would queue without end.
 */
export const MAX_WAITING_PER_CONNECTION = 256;

/** How long a client has to send a request, from its first byte: Node's `headersTimeout` and `requestTimeout`. */
export interface ClientAllowance {
  /** Until the end of its headers. */
  readonly headersMs: number;
  /** Until the end of its body. */
  readonly requestMs: number;
}

/** Node's own defaults. */
export const DEFAULT_CLIENT_ALLOWANCE: ClientAllowance = { headersMs: 60_000, requestMs: 300_000 };

/** The answer to a request Node could not hand over: malformed, or not sent in time. */
export interface Refusal {
  /** Node's `headersTimeout` or `requestTimeout` ran out, rather than the parser rejecting the request. */
  readonly timedOut: boolean;
  /** Writes the answer and ends the connection. */
  send(): void;
}

export interface TurnTaking {
  /** The server's request listener: takes each connection's requests one at a time. */
  readonly listener: RequestListener;
  /**
   * Refuses the request `socket` is in the middle of, in its turn: after the answers to every request
   * read before it, never in their place. A timeout while any of them is unanswered counted time the
   * server held the request (working on those, or not reading): it gets its allowance again, counted
   * from its turn, and is refused only if it is still incomplete then.
   */
  refuseInTurn(socket: Duplex, refusal: Refusal): void;
}

/** One connection's requests: the one being handled, those waiting behind it, and a refusal to come. */
interface Turns {
  current: IncomingMessage | undefined;
  readonly waiting: Array<{ readonly req: IncomingMessage; readonly take: () => void }>;
  /** The last request handed over, complete or not. */
  last: IncomingMessage | undefined;
  /** A refusal, sent or waiting for its turn: nothing more is read, nor taken after it. */
  refused?: Pending;
  /** A timed-out request given its allowance again, counted from its turn (`since`). */
  excused?: Pending & { since?: number; timer?: NodeJS.Timeout };
}

/** A refusal and its request: undefined while its headers have not all come. */
interface Pending {
  req: IncomingMessage | undefined;
  readonly refusal: Refusal;
}

/**
 * Takes the requests of one connection one at a time: a request pipelined behind another (RFC 9112
 * §9.3.2) is handled once the answer before it is complete, so it sees what that request did, as it
 * would have had its client waited. Node already sends the answers in order; this orders the work.
 *
 * With MAX_WAITING_PER_CONNECTION waiting, the connection is paused until an answer makes room: TCP holds
 * the client's next requests, and every request read is answered. The read Node is parsing still hands
 * over the requests it holds, so at most one read's worth (64 KiB) more wait. Requests still waiting when
 * their connection goes are dropped unanswered, like any abandoned request. A request Node refuses
 * (malformed, or not sent within `allowance`) is answered in its turn too (`refuseInTurn`).
 */
export function takeInTurn(listener: RequestListener, allowance: ClientAllowance = DEFAULT_CLIENT_ALLOWANCE): TurnTaking {
  const connections = new WeakMap<Duplex, Turns>();

  const turnsOf = (socket: Duplex): Turns => {
    const known = connections.get(socket);
    if (known !== undefined) return known;
    const turns: Turns = { current: undefined, waiting: [], last: undefined };
    connections.set(socket, turns);
    // Node resumes the socket itself (as a request's body is read or dumped, or once answers drain):
    // paused again while the bound is reached, or for good once a request was malformed.
    socket.on('resume', () => {
      if (turns.waiting.length >= MAX_WAITING_PER_CONNECTION || turns.refused !== undefined) socket.pause();
    });
    socket.once('close', () => clearTimeout(turns.excused?.timer));
    return turns;
  };

  /** Sends a refusal; nothing more is read from its connection, nor taken. */
  const refuseNow = (turns: Turns, pending: Pending) => {
    turns.excused = undefined;
    turns.refused = pending;
    pending.refusal.send();
  };

  /** Counts an excused request's allowance from its turn: its headers, then all of it. */
  const watchExcused = (turns: Turns) => {
    const excused = turns.excused;
    if (excused === undefined) return;
    clearTimeout(excused.timer);
    excused.since ??= performance.now();
    if (excused.req?.complete) {
      turns.excused = undefined;
      return;
    }
    const left = excused.since + (excused.req === undefined ? allowance.headersMs : allowance.requestMs) - performance.now();
    if (left <= 0) refuseNow(turns, excused);
    else excused.timer = setTimeout(() => watchExcused(turns), left);
  };

  const takeNext = (socket: Duplex, turns: Turns) => {
    turns.current = undefined;
    if (socket.destroyed) return;
    const next = turns.waiting.shift();
    if (turns.waiting.length === MAX_WAITING_PER_CONNECTION - 1 && turns.refused === undefined) socket.resume();
    if (next !== undefined) next.take();
    // Every request read is answered: the turn of the one whose headers have not all come.
    else if (turns.refused !== undefined) turns.refused.refusal.send();
    else if (turns.excused !== undefined && turns.excused.req === undefined) watchExcused(turns);
  };

  return {
    listener(req, res) {
      const socket = req.socket;
      const turns = turnsOf(socket);
      turns.last = req;
      // The excused request, its headers now in: its allowance runs on from its turn.
      if (turns.excused !== undefined && turns.excused.req === undefined) turns.excused.req = req;
      const take = () => {
        if (turns.refused?.req === req) return turns.refused.refusal.send();
        turns.current = req;
        if (turns.excused?.req === req) watchExcused(turns);
        // 'close' comes once the answer is complete, or once the connection is gone (then destroyed).
        res.once('close', () => takeNext(socket, turns));
        try {
          listener(req, res);
        } catch {
          // A listener that throws ends its own exchange, never the process nor its neighbours' turns.
          res.destroy();
        }
      };
      if (turns.current === undefined) return take();
      turns.waiting.push({ req, take });
      if (turns.waiting.length >= MAX_WAITING_PER_CONNECTION) socket.pause();
    },

    refuseInTurn(socket, refusal) {
      const turns = connections.get(socket);
      if (turns === undefined) return refusal.send();
      if (turns.refused !== undefined) return;
      clearTimeout(turns.excused?.timer);
      turns.excused = undefined;
      // The request the parser holds: the last one handed over if its body is incomplete, else one
      // whose headers have not all come.
      const req = turns.last !== undefined && !turns.last.complete ? turns.last : undefined;
      const answersOwed = req === undefined ? turns.current !== undefined : turns.waiting.some((waiting) => waiting.req === req);
      if (!answersOwed) return refuseNow(turns, { req, refusal });
      if (refusal.timedOut) {
        turns.excused = { req, refusal };
        return;
      }
      turns.refused = { req, refusal };
      socket.pause();
    },
  };
}
