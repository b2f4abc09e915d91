// The front's upstream cache over a scripted upstream client (no sockets): a list too large to
// check whole is a stream for one client only, never handed to the requests that shared the call.
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { test } from 'node:test'
import { createUpstreamCache } from '../../src/front/upstream-cache.js'
import type { UpstreamClient, UpstreamResponse } from '../../src/front/upstream-client.js'
import { testConfig } from '../helpers/config.js'

const LIST = JSON.stringify([{ slug: 'a', content: 'x'.repeat(100) }, { slug: 'b' }])

/** An upstream client whose calls wait until the test answers them, in order. */
function scriptedUpstream (): { client: UpstreamClient, calls: () => number, answer: (index: number, response: () => UpstreamResponse) => void } {
  const pending: Array<(response: UpstreamResponse) => void> = []
  return {
    client: { get: async () => await new Promise<UpstreamResponse>((resolve) => pending.push(resolve)), inRotation: () => 1 },
    calls: () => pending.length,
    answer: (index, response) => pending[index]?.(response())
  }
}

const streamed = (): UpstreamResponse => ({ status: 200, headers: {}, body: Buffer.alloc(0), stream: Readable.from([Buffer.from(LIST)]) })

function cacheOver (client: UpstreamClient): ReturnType<typeof createUpstreamCache> {
  const config = testConfig()
  return createUpstreamCache({ upstream: client, cacheMaxBytes: config.cacheMaxBytes, staleIfErrorS: 0, maxListBytes: 1 << 20, maxPostBytes: 1 << 20, listBufferLimit: 10 })
}

const tick = (): Promise<void> => new Promise(setImmediate)

test('a streamed list goes to the request whose call it was; those sharing the call make their own', async () => {
  const upstream = scriptedUpstream()
  const cache = cacheOver(upstream.client)
  const first = cache.list({}, 'r1')
  // Arriving while the first call runs: these two share the next call.
  const second = cache.list({}, 'r2')
  const third = cache.list({}, 'r3')
  assert.equal(upstream.calls(), 1)
  upstream.answer(0, streamed)
  await tick()
  assert.equal(upstream.calls(), 2, 'one shared call for the two latecomers')
  upstream.answer(1, streamed)
  await tick()
  assert.equal(upstream.calls(), 3, 'the latecomer without the stream made its own call')
  upstream.answer(2, streamed)
  const outcomes = await Promise.all([first, second, third])
  const streams = outcomes.map((outcome) => {
    assert.equal(outcome.kind, 'stream')
    return outcome.kind === 'stream' ? outcome.stream : undefined
  })
  assert.equal(new Set(streams).size, 3, 'a stream was handed to two requests')
  for (const stream of streams) assert.equal(await text(stream as Readable), LIST)
})

test('a whole body is shared by the requests that shared its call, and revalidated with its ETag', async () => {
  const upstream = scriptedUpstream()
  const requests: Array<string | undefined> = []
  const client: UpstreamClient = {
    get: async (path, options) => {
      requests.push(options.ifNoneMatch)
      return await upstream.client.get(path, options)
    },
    inRotation: () => 1
  }
  const cache = cacheOver(client)
  const small = '[{"slug":"a"}]'
  const first = cache.list({}, 'r1')
  const second = cache.list({}, 'r2')
  const third = cache.list({}, 'r3')
  upstream.answer(0, () => ({ status: 200, headers: { etag: '"v1"' }, body: Buffer.from(small) }))
  await tick()
  upstream.answer(1, () => ({ status: 304, headers: { etag: '"v1"' }, body: Buffer.alloc(0) }))
  const [a, b, c] = await Promise.all([first, second, third])
  assert.equal(upstream.calls(), 2)
  assert.deepEqual(requests, [undefined, '"v1"'])
  for (const outcome of [a, b, c]) {
    assert.equal(outcome?.kind, 'body')
    if (outcome?.kind === 'body') assert.equal(outcome.body.representation.body.toString(), small)
  }
  assert.equal(b?.kind === 'body' && c?.kind === 'body' && b.body === c.body, true, 'the shared call\'s body is one object')
})

test('a flood of distinct queries keeps at most 10,000 copies, whatever the memory allowed', async () => {
  let calls = 0
  const client: UpstreamClient = {
    get: async (path) => {
      calls++
      return { status: 200, headers: { etag: `"${calls}"` }, body: Buffer.from(`[{"slug":"a","path":${JSON.stringify(path)}}]`) }
    },
    inRotation: () => 1
  }
  const cache = cacheOver(client)
  for (let i = 0; i < 10_500; i++) await cache.list({ limit: (i % 1000) + 1, tag: `tag-${Math.floor(i / 1000)}` }, `r${i}`)
  assert.equal(calls, 10_500)
  assert.equal(cache.held().copies, 10_000)
})
