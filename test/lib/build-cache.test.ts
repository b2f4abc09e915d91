// Values built once per key and kept within a byte budget: a value that grows once kept is
// counted again, and evicts older entries when it no longer fits beside them.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createBuildCache, type BuildCache } from '../../src/lib/build-cache.js'

/** A value whose size grows when told to, telling the cache that keeps it. */
class Growing {
  grown: (() => void) | undefined
  constructor (public bytes: number) {}
  grow (by: number): void {
    this.bytes += by
    this.grown?.()
  }
}

const cacheOf = (maxBytes: number): BuildCache<Growing> =>
  createBuildCache<Growing>({ max: 100, maxBytes, sizeOf: (value) => value.bytes, grows: (value, grown) => { value.grown = grown } })

test('a value that grows past the budget evicts the oldest, and is itself kept', async () => {
  const cache = cacheOf(300)
  const values = new Map<string, Growing>()
  let builds = 0
  const get = async (key: string): Promise<Growing> => await cache.get(key, async () => {
    builds++
    const value = new Growing(100)
    values.set(key, value)
    return value
  })
  for (const key of ['a', 'b', 'c']) await get(key)
  assert.equal(builds, 3)
  values.get('c')?.grow(50)
  assert.equal(cache.size, 2, 'a is evicted for c grown to 150')
  await get('c')
  await get('b')
  assert.equal(builds, 3, 'b and c are still kept')
  await get('a')
  assert.equal(builds, 4, 'a was built again')
})

test('a value that grows after it was evicted changes nothing', async () => {
  const cache = cacheOf(200)
  const a = await cache.get('a', async () => new Growing(100))
  await cache.get('b', async () => new Growing(100))
  await cache.get('c', async () => new Growing(100))
  assert.equal(cache.size, 2)
  a.grow(50)
  assert.equal(cache.size, 2, 'b and c stay')
  let built = false
  await cache.get('b', async () => { built = true; return new Growing(1) })
  assert.equal(built, false)
})
