// Values built once per key and kept, bounded in number and in bytes, whatever keys clients
// make up (every distinct list query is a key): a flood of distinct queries evicts older
// entries instead of growing memory. Concurrent requests for a key being built share its build;
// a failed build is not kept.
import { LRUCache } from 'lru-cache'
import { countAgain } from './lru-recount.js'

export interface BuildCacheOptions<V> {
  /** Entries kept at most. */
  max: number
  /** Bytes kept at most, as `sizeOf` counts them. */
  maxBytes: number
  sizeOf: (value: V) => number
  /**
   * For values that grow once kept (a representation's compressed variants): gives `grown`,
   * which counts the value again while it is still kept.
   */
  grows?: (value: V, grown: () => void) => void
}

export interface BuildCache<V> {
  get: (key: string, build: () => Promise<V>) => Promise<V>
  /** Entries kept and builds in flight (for tests and metrics). */
  readonly size: number
}

export function createBuildCache<V> ({ max, maxBytes, sizeOf, grows }: BuildCacheOptions<V>): BuildCache<V> {
  // Wrapped, so that null (a post that does not exist) can be kept too.
  const built = new LRUCache<string, { value: V }>({ max, maxSize: maxBytes, sizeCalculation: ({ value }) => Math.max(1, sizeOf(value)) })
  // In flight: at most one per request being served, so bounded by the requests themselves.
  const building = new Map<string, Promise<V>>()
  return {
    async get (key, build) {
      const entry = built.get(key)
      if (entry !== undefined) return entry.value
      let pending = building.get(key)
      if (pending === undefined) {
        const started = build()
        pending = started
        building.set(key, started)
        started.then((value) => {
          building.delete(key)
          const entry = { value }
          built.set(key, entry)
          grows?.(value, () => { countAgain(built, key, entry) })
        }, () => building.delete(key))
      }
      return await pending
    },
    get size () {
      return built.size + building.size
    }
  }
}
