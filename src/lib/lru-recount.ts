// lru-cache counts an entry's size only when it is set with another value: an entry that grows
// in place (a held body once its compressed variants are made) is counted again by setting it
// anew, while it is still the one kept under its key, which evicts the least recently used
// others if it no longer fits. One that was replaced or evicted meanwhile counts for nothing.
import type { LRUCache } from 'lru-cache'

export function countAgain<K extends {}, V extends {}> (cache: LRUCache<K, V>, key: K, entry: V): void {
  if (cache.peek(key) !== entry) return
  cache.delete(key)
  cache.set(key, entry)
}
