import type { AuthorizerContext } from '../domain/auth/authorizer-context';
import type { ErrorCode } from '../facts/error-codes';

/**
 * What an operation states of the requests a deployment sends it (shared/operations/): the parts its route
 * reads, as data. The hook and the deployment traffic make the event around them (method, path, caller), and
 * name a pet in each path parameter: one no pet has for a check, one of the newest stored pets for traffic.
 */
export interface RequestParts {
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What a check must get back. */
export type Expectation =
  /** An HTTP answer with our Error body of this code, under the status the code always has. */
  | { readonly kind: 'error'; readonly code: ErrorCode }
  /** 200 with a JSON array: a page of pets. */
  | { readonly kind: 'listing' }
  /**
   * The authorizer's answer: authorized, with this verdict in its context (functions/authorizer.ts), and,
   * when `keyId` is given, the id of the key it recognised.
   */
  | { readonly kind: 'verdict'; readonly outcome: AuthorizerContext['outcome']; readonly keyId?: string };

/** The check an operation's new version must pass as an authenticated caller, besides refusing an anonymous one. */
export interface OperationCheck {
  /** What it shows, as a sentence: it names the check in the log and in its verdict. */
  readonly name: string;
  /** Sent as a caller the authorizer accepted, and, without the caller, as the anonymous check's request. */
  readonly request: RequestParts;
  readonly expect: Expectation;
}

/** What a deployment sends an operation: its check, and its traffic's requests, taken in turn. */
export interface OperationChecks {
  readonly check: OperationCheck;
  /** None writes: the answers of the new and old versions are compared, and clients must never see them. */
  readonly traffic: readonly RequestParts[];
}
