// The young collector: a minor collection once enough bytes were relayed since the last one,
// and with V8's own collection, the socket buffers a relay drops do not pile up.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { createYoungCollector, exposedGc, YOUNG_COLLECTION_BYTES } from '../../src/lib/young-collection.js'

const MIB = 1024 * 1024

test('collects once at least everyBytes were relayed since the last collection, and never leaves that many uncollected', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 1000 }), fc.array(fc.integer({ min: 0, max: 3000 }), { maxLength: 200 }), (everyBytes, chunks) => {
    // The reference: bytes counted since the last collection, seen from outside.
    let since = 0
    let collections = 0
    const collector = createYoungCollector(everyBytes, () => {
      assert.ok(since >= everyBytes, `a collection after ${since} bytes, fewer than ${everyBytes}`)
      collections++
      since = 0
    })
    for (const bytes of chunks) {
      since += bytes
      collector.relayed(bytes)
      assert.ok(since < everyBytes, `${since} bytes relayed without a collection`)
    }
    assert.ok(collections <= chunks.reduce((sum, bytes) => sum + bytes, 0) / everyBytes)
  }))
})

test('this Node gives V8\'s gc function without --expose-gc', () => {
  assert.equal(typeof exposedGc(), 'function')
})

test('socket-sized buffers, dropped as a relay drops them, stay within a few collection intervals', () => {
  const collector = createYoungCollector()
  const before = process.memoryUsage().arrayBuffers
  let peak = before
  // 96 MiB in 64 KiB buffers, each allocated apart as a socket read is, and dropped at once.
  for (let i = 0; i < 96 * 16; i++) {
    const read = Buffer.allocUnsafeSlow(64 * 1024)
    read[0] = i
    collector.relayed(read.length)
    if (i % 16 === 0) peak = Math.max(peak, process.memoryUsage().arrayBuffers)
  }
  // Without collections V8 lets them reach its external-memory limit (64 MiB) before a full one.
  const rise = peak - before
  assert.ok(rise < 3 * YOUNG_COLLECTION_BYTES, `buffer memory rose by ${(rise / MIB).toFixed(1)} MiB`)
})
