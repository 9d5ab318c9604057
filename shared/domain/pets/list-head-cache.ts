import { StoreUnavailableError } from '../store-errors';
import type { ListPage, ListQuery, PetStore } from './pet-store';

/**
 * The first pages of one listing (status filter and limit) an instance must be asked for within a second
 * before it serves them from memory. Below it every listing reads the index, so a quiet API lists a pet
 * the moment its create has answered; above it one read a second serves them all.
 */
export const HOT_HEAD_PAGES_PER_SECOND = 10;

export interface ListHeadCacheOptions {
  /** The longest a first page is served from the cache, in milliseconds; 0 returns the store unchanged. */
  readonly maxAgeMs: number;
  /** The clock, in milliseconds; tests pass their own. */
  readonly now?: () => number;
}

interface Head {
  /** When the last HOT_HEAD_PAGES_PER_SECOND first pages were asked for, oldest at `next`. */
  readonly askedAt: number[];
  next: number;
  cached?: { readonly page: ListPage; readonly readAt: number };
  /** The store refused the last read: an instance whose reads are throttled asks too slowly to look hot. */
  refused: boolean;
}

/**
 * A store whose listings serve a hot first page (per status filter and limit) from this instance's
 * memory for at most `maxAgeMs` after reading it. Every listing reads the newest pets, so without it
 * each request of a popular listing reads the same items at the head of every shard. A first page asked
 * for less often than HOT_HEAD_PAGES_PER_SECOND is read from the store, so what the cache adds to a
 * page's age (docs/contract-decisions.md) only meets traffic too busy to tell; so is any first page once
 * its cached copy is `maxAgeMs` old. When the store refuses a read (throttled, unreachable), a copy
 * younger than that answers instead, and the next ones too until a read succeeds. Later pages, by
 * cursor, and failures are never cached.
 */
export function cacheListHead(store: PetStore, { maxAgeMs, now = Date.now }: ListHeadCacheOptions): PetStore {
  if (maxAgeMs === 0) return store;
  const heads = new Map<string, Head>();
  return {
    insert: (pet, creationToken) => store.insert(pet, creationToken),
    get: (id) => store.get(id),
    async list(query: ListQuery): Promise<ListPage> {
      if (query.after !== undefined) return store.list(query);
      const key = `${query.status ?? ''} ${query.limit}`;
      let head = heads.get(key);
      if (head === undefined) {
        head = { askedAt: new Array(HOT_HEAD_PAGES_PER_SECOND).fill(Number.NEGATIVE_INFINITY), next: 0, refused: false };
        heads.set(key, head);
      }
      const time = now();
      head.askedAt[head.next] = time;
      head.next = (head.next + 1) % HOT_HEAD_PAGES_PER_SECOND;
      // Hot when the oldest of the last HOT_HEAD_PAGES_PER_SECOND asks, this one included, is within a second.
      const hot = time - head.askedAt[head.next]! < 1000;
      const young = head.cached !== undefined && time - head.cached.readAt < maxAgeMs ? head.cached.page : undefined;
      if (young && (hot || head.refused)) return young;
      try {
        const page = await store.list(query);
        head.cached = { page, readAt: time };
        head.refused = false;
        return page;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError) || young === undefined) throw error;
        head.refused = true;
        return young;
      }
    },
  };
}
