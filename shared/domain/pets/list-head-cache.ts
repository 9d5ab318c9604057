import type { ListPage, ListQuery, PetStore } from './pet-store';

export interface ListHeadCacheOptions {
  /** The longest a first page is served from the cache, in milliseconds; 0 returns the store unchanged. */
  readonly maxAgeMs: number;
  /** The clock, in milliseconds; tests pass their own. */
  readonly now?: () => number;
}

/**
 * A store whose listings serve each first page (per status filter and limit) from this instance's
 * memory for at most `maxAgeMs` after reading it. Every listing reads the newest pets, so without it
 * each request reads the same items at the head of every shard. The listing indexes are eventually
 * consistent already; this adds at most `maxAgeMs` to how old a first page may be (docs/contract-decisions.md).
 * Later pages, by cursor, and failures are never cached.
 */
export function cacheListHead(store: PetStore, { maxAgeMs, now = Date.now }: ListHeadCacheOptions): PetStore {
  if (maxAgeMs === 0) return store;
  const heads = new Map<string, { readonly page: ListPage; readonly readAt: number }>();
  return {
    insert: (pet, creationToken) => store.insert(pet, creationToken),
    get: (id) => store.get(id),
    async list(query: ListQuery): Promise<ListPage> {
      if (query.after !== undefined) return store.list(query);
      const key = `${query.status ?? ''} ${query.limit}`;
      const cached = heads.get(key);
      const time = now();
      if (cached !== undefined && time - cached.readAt < maxAgeMs) return cached.page;
      const page = await store.list(query);
      heads.set(key, { page, readAt: time });
      return page;
    },
  };
}
