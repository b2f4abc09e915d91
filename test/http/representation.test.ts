// The representation both tiers serve: its strong ETag, its compressed variants, the weak
// comparison of If-None-Match, the 304, and the negotiation of Accept-Encoding.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { GCProfiler } from 'node:v8'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import Fastify, { type FastifyInstance } from 'fastify'
import { chooseEncoding, createRepresentation, etagOf, heldSizeOf, ifNoneMatchHolds, ownBytes, sendConditional, sendRepresentation, transientRepresentation, type Representation } from '../../src/http/representation.js'
import { gc, minorGc } from '../helpers/gc.js'

const BODY = Buffer.from(JSON.stringify({ slug: 'a', content: 'x'.repeat(4000) }))

describe('chooseEncoding (RFC 9110 §12.5.3)', () => {
  const cases: Array<[string | undefined, 'br' | 'gzip' | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'], // equal weights: our preference
    ['br;q=0.1, gzip', 'gzip'], // q-values decide
    ['gzip;q=0.5, br;q=0.4', 'gzip'],
    ['br;q=0.5, gzip;q=0.5', 'br'],
    ['GZIP', 'gzip'], // codings are case-insensitive
    ['gzip, br;q=0', 'gzip'], // q=0 refuses
    ['gzip;q=0, *', 'br'], // `*` stands for what is not named
    ['br;q=0, *', 'gzip'], // ...and never for what is refused
    ['gzip;q=0, br;q=0, *', undefined],
    ['*', 'br'],
    ['*;q=0', undefined], // nothing acceptable: identity anyway
    ['identity;q=0', undefined],
    ['identity;q=1, gzip;q=0.5', undefined], // identity preferred by the client
    ['deflate', undefined],
    ['gzip;q=0.000', undefined]
  ]
  for (const [header, expected] of cases) {
    test(`${JSON.stringify(header)} → ${expected ?? 'identity'}`, () => {
      assert.equal(chooseEncoding(header), expected)
      assert.equal(chooseEncoding(header), expected, 'the same when asked again (the choice is kept)')
    })
  }
  test('past the values whose choice is kept, new ones are still negotiated', () => {
    for (let i = 0; i < 150; i++) assert.equal(chooseEncoding(`x-${i}, gzip;q=0.${(i % 9) + 1}`), 'gzip')
    assert.equal(chooseEncoding('br;q=0.9, gzip;q=0.8, x-999'), 'br')
  })
})

describe('ETags and If-None-Match', () => {
  test('etagOf is a strong, quoted tag of the bytes; a given tag is kept', () => {
    const etag = etagOf(BODY)
    assert.match(etag, /^"[\w-]+"$/)
    assert.equal(etagOf(Buffer.from(BODY)), etag)
    assert.notEqual(etagOf(Buffer.from('other')), etag)
    assert.equal(createRepresentation(BODY).etag, etag)
    assert.equal(createRepresentation(BODY, '"upstream"').etag, '"upstream"')
  })

  test('weak comparison: W/ ignored, lists and * match, any variant of the same body matches', () => {
    const etag = '"abc"'
    for (const header of ['"abc"', 'W/"abc"', '"x", "abc"', ' "x" ,W/"abc" ', '*', '"abc-br"', '"abc-gz"', 'W/"abc-gz"']) {
      assert.equal(ifNoneMatchHolds(header, etag), true, header)
    }
    for (const header of [undefined, '', '"abcd"', '"ab"', 'abc', '"x"', '"abc-zz"', '"ABC"']) {
      assert.equal(ifNoneMatchHolds(header, etag), false, String(header))
    }
  })

  test('variants are made once, on first use, and decode to the body', async () => {
    const representation = createRepresentation(BODY)
    const br = representation.encoded('br')
    assert.equal(representation.encoded('br'), br, 'made once')
    assert.deepEqual(brotliDecompressSync(await br), BODY)
    assert.deepEqual(gunzipSync(await representation.encoded('gzip')), BODY)
  })

  test('what it holds grows by each variant once made, and its holder is told each time', async () => {
    const representation = createRepresentation(BODY)
    let told = 0
    representation.onGrown = () => { told++ }
    assert.equal(representation.heldBytes, BODY.length)
    assert.equal(heldSizeOf(representation), BODY.length + 256)
    const br = await representation.encoded('br')
    assert.equal(told, 1)
    assert.equal(representation.heldBytes, BODY.length + br.length)
    await representation.encoded('br')
    assert.equal(told, 1, 'a variant made once is counted once')
    const gzip = await representation.encoded('gzip')
    assert.equal(told, 2)
    assert.equal(representation.heldBytes, BODY.length + br.length + gzip.length)
  })
})

async function appServing (body: Buffer, cacheControl = 'no-cache'): Promise<FastifyInstance> {
  const app = Fastify()
  const representation = createRepresentation(body)
  app.get('/r', async (request, reply) => await sendRepresentation(request, reply, representation, cacheControl))
  let sent = 0
  app.get('/conditional', async (request, reply) => await sendConditional(request, reply, { etag: '"c"', cacheControl }, async () => {
    sent++
    return reply.send(`sent ${sent}`)
  }))
  app.get('/untagged', async (request, reply) => await sendConditional(request, reply, { etag: undefined, cacheControl }, async () => reply.send('fresh')))
  await app.ready()
  return app
}

describe('sendRepresentation and sendConditional', () => {
  test('200 with ETag, Cache-Control and Vary; the negotiated variant with its own ETag', async (t) => {
    const app = await appServing(BODY, 'max-age=5')
    t.after(() => app.close())
    const etag = etagOf(BODY)
    const plain = await app.inject('/r')
    assert.equal(plain.statusCode, 200)
    assert.equal(plain.headers.etag, etag)
    assert.equal(plain.headers['cache-control'], 'max-age=5')
    assert.equal(plain.headers.vary, 'Accept-Encoding')
    assert.equal(plain.headers['content-encoding'], undefined)
    assert.deepEqual(plain.rawPayload, BODY)
    const gz = await app.inject({ url: '/r', headers: { 'accept-encoding': 'br;q=0.1, gzip' } })
    assert.equal(gz.headers['content-encoding'], 'gzip')
    assert.equal(gz.headers.etag, `${etag.slice(0, -1)}-gz"`)
    assert.deepEqual(gunzipSync(gz.rawPayload), BODY)
    const br = await app.inject({ url: '/r', headers: { 'accept-encoding': 'gzip, br' } })
    assert.equal(br.headers['content-encoding'], 'br')
    assert.equal(br.headers.etag, `${etag.slice(0, -1)}-br"`)
  })

  test('Vary: Accept-Encoding is added to a Vary already set (Origin, by CORS with a list of origins)', async (t) => {
    const app = Fastify()
    t.after(() => app.close())
    const representation = createRepresentation(BODY)
    app.get('/r', async (request, reply) => await sendRepresentation(request, reply.header('vary', 'Origin'), representation, 'no-cache'))
    assert.equal((await app.inject('/r')).headers.vary, 'Origin, Accept-Encoding')
  })

  test('a small body is never compressed', async (t) => {
    const app = await appServing(Buffer.from('{"slug":"a"}'))
    t.after(() => app.close())
    const response = await app.inject({ url: '/r', headers: { 'accept-encoding': 'br, gzip' } })
    assert.equal(response.headers['content-encoding'], undefined)
    assert.equal(response.body, '{"slug":"a"}')
  })

  test('304 without a body when If-None-Match holds, for any variant, with ETag and Cache-Control', async (t) => {
    const app = await appServing(BODY)
    t.after(() => app.close())
    const etag = etagOf(BODY)
    for (const tag of [etag, `W/${etag}`, `${etag.slice(0, -1)}-gz"`]) {
      const response = await app.inject({ url: '/r', headers: { 'if-none-match': tag, 'accept-encoding': 'br' } })
      assert.equal(response.statusCode, 304, tag)
      assert.equal(response.body, '')
      assert.equal(response.headers.etag, etag)
      assert.equal(response.headers['cache-control'], 'no-cache')
    }
    assert.equal((await app.inject({ url: '/r', headers: { 'if-none-match': '"other"' } })).statusCode, 200)
  })

  test('sendConditional makes the 200 only when needed; without a validator it always sends', async (t) => {
    const app = await appServing(BODY)
    t.after(() => app.close())
    const notModified = await app.inject({ url: '/conditional', headers: { 'if-none-match': '"c"' } })
    assert.equal(notModified.statusCode, 304)
    assert.equal(notModified.headers.etag, '"c"')
    const sent = await app.inject('/conditional')
    assert.equal(sent.body, 'sent 1', 'send ran for the 200 only')
    assert.equal(sent.headers.etag, '"c"')
    const untagged = await app.inject({ url: '/untagged', headers: { 'if-none-match': '*' } })
    assert.equal(untagged.statusCode, 200)
    assert.equal(untagged.headers.etag, undefined)
    assert.equal(untagged.headers['cache-control'], 'no-cache')
  })
})

describe('held bodies own their memory', () => {
  const ownsItsMemory = (bytes: Buffer): boolean => bytes.byteLength === bytes.buffer.byteLength

  test('a body carved out of a shared slab is copied out of it, with its bytes and ETag; one that owns its memory is kept as it is', async () => {
    const carved = Buffer.from('x'.repeat(2000))
    assert.ok(!ownsItsMemory(carved), 'Node carves a small buffer out of a shared slab')
    const representation = createRepresentation(carved)
    assert.ok(ownsItsMemory(representation.body))
    assert.deepEqual(representation.body, carved)
    assert.equal(representation.etag, etagOf(carved))
    assert.ok(ownsItsMemory(await representation.encoded('gzip')), 'its compressed variants too')
    assert.equal(gunzipSync(await representation.encoded('gzip')).toString(), carved.toString())
    const own = Buffer.allocUnsafeSlow(2000).fill(1)
    assert.equal(ownBytes(own), own)
  })

  test('a transient representation keeps its body where it is, with the same tag and variants as a held one', async () => {
    const carved = Buffer.from('{"a":"' + 'x'.repeat(1500) + '"}')
    assert.ok(!ownsItsMemory(carved), 'a small buffer is carved from a slab')
    const transient = transientRepresentation(carved)
    assert.equal(transient.body, carved)
    assert.equal(transient.etag, createRepresentation(carved).etag)
    assert.equal(transientRepresentation(carved, '"given"').etag, '"given"')
    assert.equal(gunzipSync(await transient.encoded('gzip')).toString(), carved.toString())
  })

  test('a representation made for one answer and dropped is freed by a young collection, not promoted', () => {
    const made = 100_000
    const body = Buffer.from('{"a":1}')
    // What the test made before is promoted now, not counted below.
    minorGc()
    minorGc()
    const profiler = new GCProfiler()
    profiler.start()
    // The last few kept, as answers in flight would be (and so that none is optimised away).
    const inFlight = new Array<Representation>(64)
    let bytes = 0
    for (let i = 0; i < made; i++) bytes += (inFlight[i % inFlight.length] = transientRepresentation(body, '"tag"')).heldBytes
    // Whatever the young generation's size, at least one collection after they were made.
    minorGc()
    const young = profiler.stop().statistics.filter(({ gcType }) => gcType === 'Scavenge' || gcType === 'MinorMarkSweep')
    const oldSpace = (stats: typeof young[number]['afterGC']): number =>
      stats.heapSpaceStatistics.find(({ spaceName }) => spaceName === 'old_space')?.spaceUsedSize ?? 0
    const promoted = young.reduce((sum, { beforeGC, afterGC }) => sum + oldSpace(afterGC) - oldSpace(beforeGC), 0)
    assert.equal(bytes, made * body.byteLength)
    // As an object literal with a getter, 530 to 770 bytes of each were promoted.
    assert.ok(promoted / made < 50, `${(promoted / made).toFixed(1)} bytes promoted per representation made`)
  })

  test('holding small bodies made among other buffers holds their bytes, not the slabs they were carved from', () => {
    const count = 1000
    const bodyBytes = 2048
    gc()
    const before = process.memoryUsage().arrayBuffers
    const held = []
    for (let i = 0; i < count; i++) {
      held.push(createRepresentation(Buffer.from('y'.repeat(bodyBytes))))
      // Garbage carved from the same slab, as a busy process makes between two held bodies.
      Buffer.allocUnsafe(Buffer.poolSize / 2 - bodyBytes).fill(0)
    }
    // The buffers a collection finds dead are freed by a sweep that may end after it (Node 26):
    // the next collection waits for that sweep.
    gc()
    gc()
    const rise = process.memoryUsage().arrayBuffers - before
    assert.equal(held.length, count)
    // Without the copy, each body kept its whole slab: 8 KiB on Node 22, 64 KiB since Node 24.
    assert.ok(rise < 2 * count * bodyBytes, `buffers rose by ${(rise / 1048576).toFixed(1)} MiB for ${(count * bodyBytes / 1048576).toFixed(1)} MiB held`)
  })
})
