/**
 * Where `npm start` serves and which DynamoDB it uses, by the settings it reads (PORT, HOST,
 * DYNAMODB_PORT, DYNAMODB_ENDPOINT): npm start listens by them, and the local tools find it by them.
 */
import { BASE_PATH } from '../shared/facts/routes';
import { messageOf } from '../shared/runtime/error-message';
import { DEFAULT_DYNAMODB_PORT, DYNALITE_HOST } from './dynamodb-local';
import { DEFAULT_HOST, DEFAULT_PORT } from './listen';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A loopback port nothing listens on, for a store that refuses every connection: 2, below every port a server asking
 * for port 0 is given, and not one fetch refuses to call (1 is). A port bound and released instead could be handed
 * to a server starting meanwhile, and the "unreachable" store would answer.
 */
export const CLOSED_PORT = 2;

/** A setting's port number; `fallback` when unset. */
export function portFrom(env: Env, name: string, fallback: number): number {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`${name} must be a port number, got "${value}"`);
  return port;
}

/** `DYNAMODB_ENDPOINT`: an absolute http(s) URL of a DynamoDB-compatible server, or unset. */
export function endpointFrom(env: Env, name: string): string | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be a URL such as http://127.0.0.1:8000, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${name} must be an http or https URL, got "${value}"`);
  return value.replace(/\/+$/, '');
}

export function hostFrom(env: Env): string {
  return env.HOST || DEFAULT_HOST;
}

/** Hosts a client on this machine reaches as localhost: IPv4's loopback, and every interface. */
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '0.0.0.0', '::']);

/** The origin a client on this machine calls to reach a server listening on `host`:`port`. */
export function originOn(host: string, port: number): string {
  if (LOCAL_HOSTS.has(host)) return `http://localhost:${port}`;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** An address a tool calls, and how it tells it: with the settings it came from. */
export interface FoundAddress {
  readonly url: string;
  readonly told: string;
}

/** The running npm start's API, ending in BASE_PATH; throws, naming the setting, when its settings cannot say where. */
export function findLocalApi(env: Env): FoundAddress {
  return found(`${originOn(hostFrom(env), knownPort(env, 'PORT', DEFAULT_PORT))}${BASE_PATH}`, 'PORT, HOST');
}

/** The DynamoDB the running npm start uses: DYNAMODB_ENDPOINT's, else its own on DYNAMODB_PORT. */
export function findLocalStore(env: Env): FoundAddress {
  const endpoint = endpointFrom(env, 'DYNAMODB_ENDPOINT');
  if (endpoint !== undefined) return found(endpoint, 'DYNAMODB_ENDPOINT');
  return found(`http://${DYNALITE_HOST}:${knownPort(env, 'DYNAMODB_PORT', DEFAULT_DYNAMODB_PORT)}`, 'DYNAMODB_PORT');
}

/** For the local tools: `given` when set, else found; settings that cannot say are one line on stderr and exit 2. */
export function findOrExit(find: (env: Env) => FoundAddress, given?: string): FoundAddress {
  if (given) return { url: given, told: given };
  try {
    return find(process.env);
  } catch (error) {
    process.stderr.write(`${messageOf(error)}\n`);
    process.exit(2);
  }
}

function found(url: string, settings: string): FoundAddress {
  return { url, told: `${url} (${settings})` };
}

/** A port a tool can call: 0 let npm start pick one, which only its banner tells. */
function knownPort(env: Env, name: string, fallback: number): number {
  const port = portFrom(env, name, fallback);
  if (port === 0) throw new Error(`${name} is 0, so npm start picked a free port: set ${name} to the one it printed.`);
  return port;
}
