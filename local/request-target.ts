import type { IncomingMessage } from 'node:http';

/** What a request is aimed at, read from its request line and its Host header as RFC 9112 §3.2 says. */
export interface RequestTarget {
  /** Path and query exactly as sent, in origin-form: `/v1/pets?limit=5`. */
  readonly pathAndQuery: string;
  /** Host and optional port: an absolute-form target's authority, else the Host header's value. */
  readonly host: string;
}

/** Why a target is not served: 400 for a malformed one, 421 for one this server cannot serve (https). */
export type RefusedTarget = 400 | 421;

/** A host name or address literal, with an optional port: nothing that could smuggle a path or a second URL. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
/** `scheme:`, which only an absolute-form target starts with (an origin-form one starts with `/`). */
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
/** `//authority`, then the path and the query; a fragment has no place in a request target. */
const HIERARCHICAL_PART = /^\/\/([^/?#]*)([^?#]*)(\?[^#]*)?$/;

/**
 * The request's target, or the status refusing it. The host (an absolute-form target's authority, else
 * the one Host header RFC 9112 requires) ends up in Location and Link, so it must be a plain host.
 */
export function readRequestTarget(req: IncomingMessage): RequestTarget | RefusedTarget {
  const hosts: string[] = [];
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    if (req.rawHeaders[index]!.toLowerCase() === 'host') hosts.push(req.rawHeaders[index + 1]!);
  }
  if (hosts.length !== 1 || !HOST.test(hosts[0]!)) return 400;
  const target = req.url ?? '/';
  const scheme = SCHEME.exec(target)?.[1]?.toLowerCase();
  if (scheme === undefined) return { pathAndQuery: target, host: hosts[0]! };

  // Only http and https name resources over HTTP; user information is refused, as RFC 9110 §4.2.4 advises.
  const parts = HIERARCHICAL_PART.exec(target.slice(scheme.length + 1));
  if ((scheme !== 'http' && scheme !== 'https') || parts === null || !HOST.test(parts[1]!)) return 400;
  // This server speaks plain HTTP: an https resource cannot be served over it (RFC 9110 §7.4).
  if (scheme === 'https') return 421;
  return { pathAndQuery: `${parts[2] || '/'}${parts[3] ?? ''}`, host: parts[1]! };
}
