/** A key claimed by a request that is still running. */
export interface InProgressRecord {
  readonly id: string;
  readonly status: 'INPROGRESS';
  /** Epoch seconds after which the record is void. */
  readonly expiration: number;
  /** Epoch milliseconds: the Lambda deadline of the request holding the key; it cannot hold it longer. */
  readonly inProgressExpiration: number;
  /** Hash of the request's input. */
  readonly validation: string;
}

/** A key whose request ended with a result, kept to answer its retries. */
export interface CompletedRecord {
  readonly id: string;
  readonly status: 'COMPLETED';
  readonly expiration: number;
  readonly validation: string;
  readonly data: Record<string, unknown>;
}

export type IdempotencyRecord = InProgressRecord | CompletedRecord;

/** What became of a claim. */
export type ClaimResult =
  | { readonly outcome: 'claimed' }
  /** A live record holds the key: a request in progress or a completed one. */
  | { readonly outcome: 'held'; readonly record: IdempotencyRecord }
  /** The key was held when the claim was refused, but its record was gone or void when read: claim again. */
  | { readonly outcome: 'vanished' };

/** Persistence of Idempotency-Key records: DynamoDB in the functions, in memory in tests. */
export interface IdempotencyStore {
  /**
   * Writes the in-progress record unless a live record holds its id: one that has not expired and,
   * if in progress, whose request's deadline has not passed (`now`, epoch milliseconds, decides).
   * A record identical to `record` is this claim's own earlier attempt and counts as claimed.
   */
  claim(record: InProgressRecord, now: number): Promise<ClaimResult>;
  /** Replaces the claim with the completed record. */
  complete(record: CompletedRecord): Promise<void>;
  /** Removes a claim whose request failed, so that its retry runs again. */
  release(id: string): Promise<void>;
}

/** Whether a record still holds its key at `now` (epoch milliseconds). */
export function isLive(record: IdempotencyRecord, now: number): boolean {
  if (record.expiration * 1000 < now) return false;
  return record.status === 'COMPLETED' || record.inProgressExpiration >= now;
}
