// What the front's held copies are counted for within CACHE_MAX_MB: a body at what it holds, its
// compressed variants once a client has taken them, so that the budget is neither overrun by
// variants nor spent on room for variants nobody asked for.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createHeldCopies } from '../../../src/front/cache/copies.js'
import { createRepresentation, heldSizeOf } from '../../../src/http/representation.js'

/** A body of `bytes` letters drawn from `seed`: its variants are about half its size. */
function bodyOf (seed: number, bytes: number): Buffer {
  const body = Buffer.alloc(bytes)
  let state = seed
  for (let i = 0; i < bytes; i++) {
    state = (state * 1103515245 + 12345) % 2147483648
    body[i] = 97 + (state >> 16) % 26
  }
  return body
}

const hold = (copies: ReturnType<typeof createHeldCopies>, path: string, body: Buffer): void =>
  copies.holdBody(path, { representation: createRepresentation(body), empty: false }, '"u"', undefined)

test('a held body is counted for its bytes alone until a client takes a compressed variant, then with it', async () => {
  const copies = createHeldCopies({ cacheMaxBytes: 1024 * 1024, staleIfErrorS: 0, now: () => 0 })
  const body = bodyOf(1, 20_000)
  hold(copies, '/a', body)
  assert.deepEqual(copies.held(), { copies: 1, bytes: body.length + 256 })
  const held = copies.body('/a') ?? assert.fail('held')
  const gzip = await held.representation.encoded('gzip')
  assert.deepEqual(copies.held(), { copies: 1, bytes: body.length + gzip.length + 256 })
  assert.equal(copies.held().bytes, heldSizeOf(held.representation))
})

test('variants made past the budget evict the least recently used copies, and the copy they grow stays', async () => {
  const body = (seed: number): Buffer => bodyOf(seed, 30_000)
  // Room for three bodies alone, not for three with their variants.
  const copies = createHeldCopies({ cacheMaxBytes: 3 * (30_000 + 256) + 1000, staleIfErrorS: 0, now: () => 0 })
  for (const [i, path] of ['/a', '/b', '/c'].entries()) hold(copies, path, body(i))
  assert.equal(copies.held().copies, 3)
  const c = copies.body('/c') ?? assert.fail('held')
  await c.representation.encoded('br')
  await c.representation.encoded('gzip')
  assert.ok(copies.body('/c') !== undefined, 'the copy that grew is kept')
  assert.equal(copies.body('/a'), undefined, 'the oldest is evicted for its variants')
  assert.ok(copies.held().bytes <= copies.maxBytes)
})

test('a variant made after its copy was replaced or forgotten counts for nothing', async () => {
  const copies = createHeldCopies({ cacheMaxBytes: 1024 * 1024, staleIfErrorS: 0, now: () => 0 })
  hold(copies, '/a', bodyOf(1, 20_000))
  const old = copies.body('/a') ?? assert.fail('held')
  const replacement = bodyOf(2, 10_000)
  hold(copies, '/a', replacement)
  await old.representation.encoded('gzip')
  assert.deepEqual(copies.held(), { copies: 1, bytes: replacement.length + 256 })
  const current = copies.body('/a') ?? assert.fail('held')
  copies.forget('/a')
  await current.representation.encoded('gzip')
  assert.deepEqual(copies.held(), { copies: 0, bytes: 0 })
})
