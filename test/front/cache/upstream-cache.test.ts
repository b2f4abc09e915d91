// The front's upstream cache over a scripted upstream client (no sockets): a list too large to
// check whole is a stream for one client only, never handed to the requests that shared the call.
import { KEYED_LIST_PATH } from '../../../src/contract/keyed-list.js'
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import { test } from 'node:test'
import { createUpstreamCache } from '../../../src/front/cache/upstream-cache.js'
import type { UpstreamClient, UpstreamResponse } from '../../../src/front/upstream/client.js'
import { ProblemError } from '../../../src/contract/problems.js'
import { testConfig } from '../../helpers/config.js'

const LIST = JSON.stringify([{ slug: 'a', content: 'x'.repeat(100) }, { slug: 'b' }])

/** An upstream client whose calls wait until the test answers them, in order. */
function scriptedUpstream (): { client: UpstreamClient, calls: () => number, answer: (index: number, response: () => UpstreamResponse) => void } {
  const pending: Array<(response: UpstreamResponse) => void> = []
  return {
    client: { get: async () => await new Promise<UpstreamResponse>((resolve) => pending.push(resolve)), version: async () => undefined, inRotation: () => 1 },
    calls: () => pending.length,
    answer: (index, response) => pending[index]?.(response())
  }
}

const UPSTREAM = 'http://127.0.0.1:1/'
const streamed = (): UpstreamResponse => ({ status: 200, headers: {}, body: Buffer.alloc(0), stream: Readable.from([Buffer.from(LIST)]), upstream: UPSTREAM })

function cacheOver (client: UpstreamClient, now?: () => number, staleIfErrorS = 0): ReturnType<typeof createUpstreamCache> {
  const config = testConfig()
  return createUpstreamCache({ upstream: client, cacheMaxBytes: config.cacheMaxBytes, cacheDiskMaxBytes: 0, staleIfErrorS, maxListBytes: 1 << 20, maxPostBytes: 1 << 20, listBufferLimit: 10, now })
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
    version: async () => undefined,
    inRotation: () => 1
  }
  const cache = cacheOver(client)
  const small = '[{"slug":"a"}]'
  const first = cache.list({}, 'r1')
  const second = cache.list({}, 'r2')
  const third = cache.list({}, 'r3')
  upstream.answer(0, () => ({ status: 200, headers: { etag: '"v1"' }, body: Buffer.from(small), upstream: UPSTREAM }))
  await tick()
  upstream.answer(1, () => ({ status: 304, headers: { etag: '"v1"' }, body: Buffer.alloc(0), upstream: UPSTREAM }))
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
      // Shapes paged through this often are asked for their keyed lists too, which this upstream lacks.
      if (path.startsWith(KEYED_LIST_PATH)) return { status: 404, headers: {}, body: Buffer.from('{}'), upstream: UPSTREAM }
      calls++
      return { status: 200, headers: { etag: `"${calls}"` }, body: Buffer.from(`[{"slug":"a","path":${JSON.stringify(path)}}]`), upstream: UPSTREAM }
    },
    version: async () => undefined,
    inRotation: () => 1
  }
  const cache = cacheOver(client)
  for (let i = 0; i < 10_500; i++) await cache.list({ limit: (i % 1000) + 1, tag: [`tag-${Math.floor(i / 1000)}`] }, `r${i}`)
  assert.equal(calls, 10_500)
  assert.equal(cache.held().copies, 10_000)
})

/**
 * An upstream labelling its answers with posts versions: GETs answer at once from `posts` (a 304
 * when the ETag matches), under the version `current`; version reads wait until the test answers
 * them, in order.
 */
function versionedUpstream (posts: Map<string, string>) {
  const state = { current: 'p1.1', gets: [] as Array<{ path: string, ifNoneMatch: string | undefined }> }
  const reads: Array<(read: { status: number, version: string | undefined }) => void> = []
  const client: UpstreamClient = {
    get: async (path, { ifNoneMatch }) => {
      state.gets.push({ path, ifNoneMatch })
      const headers = { 'posts-version': state.current }
      const slug = decodeURIComponent(path.slice('/api/post/'.length))
      const body = posts.get(slug)
      if (body === undefined) return { status: 404, headers, body: Buffer.from('{}'), upstream: UPSTREAM }
      const etag = `"${Buffer.from(body).toString('base64url')}"`
      if (ifNoneMatch === etag) return { status: 304, headers: { ...headers, etag }, body: Buffer.alloc(0), upstream: UPSTREAM }
      return { status: 200, headers: { ...headers, etag }, body: Buffer.from(body), upstream: UPSTREAM }
    },
    version: async (upstream) => {
      assert.equal(upstream, UPSTREAM, 'the version is asked of the upstream that labelled the copy')
      return await new Promise((resolve) => reads.push(resolve))
    },
    inRotation: () => 1
  }
  return {
    client,
    state,
    reads: () => reads.length,
    answerRead: (index: number, read: { status: number, version: string | undefined }) => reads[index]?.(read)
  }
}

const post = (slug: string): string => JSON.stringify({ slug, title: slug })
const bodyOf = (outcome: Awaited<ReturnType<ReturnType<typeof createUpstreamCache>['post']>>): string | undefined =>
  outcome.kind === 'body' ? outcome.body.representation.body.toString() : undefined

test('copies labelled with a posts version are confirmed by version reads shared by every request waiting, whatever it asked for', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')], ['b', post('b')], ['c', post('c')]]))
  const cache = cacheOver(upstream.client)
  for (const slug of ['a', 'b', 'c']) await cache.post(slug, {}, 'warm')
  assert.equal(upstream.state.gets.length, 3)
  // Ten requests for three posts: the first starts a read at once; the others arrived while it
  // ran, so they may not take its answer (it may predate them): they share the next read.
  const requests = Array.from({ length: 10 }, async (_, i) => await cache.post(['a', 'b', 'c'][i % 3] as string, {}, `r${i}`))
  await tick()
  assert.equal(upstream.reads(), 1)
  upstream.answerRead(0, { status: 200, version: 'p1.1' })
  await tick()
  assert.equal(upstream.reads(), 2, 'the latecomers made one read between them, after the first')
  upstream.answerRead(1, { status: 200, version: 'p1.1' })
  const outcomes = await Promise.all(requests)
  assert.deepEqual(outcomes.map(bodyOf), Array.from({ length: 10 }, (_, i) => post(['a', 'b', 'c'][i % 3] as string)))
  assert.equal(upstream.state.gets.length, 3, 'no GET: the version confirmed every copy')
})

test('once the version moves, a copy is revalidated by its ETag, relabelled, and confirmed by the new version after that', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')]]))
  const cache = cacheOver(upstream.client)
  await cache.post('a', {}, 'warm')
  upstream.state.current = 'p1.2'
  const moved = cache.post('a', {}, 'r1')
  await tick()
  upstream.answerRead(0, { status: 200, version: 'p1.2' })
  assert.equal(bodyOf(await moved), post('a'))
  assert.deepEqual(upstream.state.gets.at(-1), { path: '/api/post/a', ifNoneMatch: `"${Buffer.from(post('a')).toString('base64url')}"` })
  const confirmed = cache.post('a', {}, 'r2')
  await tick()
  upstream.answerRead(1, { status: 200, version: 'p1.2' })
  assert.equal(bodyOf(await confirmed), post('a'))
  assert.equal(upstream.state.gets.length, 2, 'the 304 labelled the copy with the new version')
})

test('a post the upstream said does not exist is held under its version: absent again without a GET until the version moves', async () => {
  const posts = new Map<string, string>()
  const upstream = versionedUpstream(posts)
  const cache = cacheOver(upstream.client)
  assert.equal((await cache.post('new', {}, 'r1')).kind, 'absent')
  const again = cache.post('new', {}, 'r2')
  await tick()
  upstream.answerRead(0, { status: 200, version: 'p1.1' })
  assert.equal((await again).kind, 'absent')
  assert.equal(upstream.state.gets.length, 1)
  // Committed meanwhile: the version moved, so the post is asked for again and found.
  posts.set('new', post('new'))
  upstream.state.current = 'p1.2'
  const created = cache.post('new', {}, 'r3')
  await tick()
  upstream.answerRead(1, { status: 200, version: 'p1.2' })
  assert.equal(bodyOf(await created), post('new'))
  assert.equal(upstream.state.gets.length, 2)
})

test('a version read that fails falls back to a regular call; one that times out fails the request with 504', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')]]))
  let failure: Error = new ProblemError('upstream-unreachable', 'refused')
  const client: UpstreamClient = { ...upstream.client, version: async () => { throw failure } }
  const cache = cacheOver(client)
  await cache.post('a', {}, 'warm')
  assert.equal(bodyOf(await cache.post('a', {}, 'r1')), post('a'))
  assert.equal(upstream.state.gets.length, 2, 'revalidated by a regular call')
  failure = new ProblemError('upstream-timeout', 'too slow')
  await assert.rejects(cache.post('a', {}, 'r2'), (err: unknown) => err instanceof ProblemError && err.status === 504)
  assert.equal(upstream.state.gets.length, 2, 'a time-out is not tried again')
  // A version read answered with another status: a regular call too.
  const answered = versionedUpstream(new Map([['a', post('a')]]))
  const other = cacheOver({ ...answered.client, version: async () => ({ status: 503, version: undefined }) })
  await other.post('a', {}, 'warm')
  assert.equal(bodyOf(await other.post('a', {}, 'r3')), post('a'))
  assert.equal(answered.state.gets.length, 2)
})

test('a version read that times out serves the held copy as stale when stale-if-error allows it, and fails the request once it is too old', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')]]))
  let clock = 0
  const cache = cacheOver({ ...upstream.client, version: async () => { throw new ProblemError('upstream-timeout', 'too slow') } }, () => clock, 60)
  await cache.post('a', {}, 'warm')
  clock = 59_000
  const outcome = await cache.post('a', {}, 'r1')
  assert.equal(bodyOf(outcome), post('a'))
  assert.deepEqual(outcome.kind === 'body' ? outcome.stale : undefined, { status: 504 })
  assert.equal(upstream.state.gets.length, 1, 'a time-out is not tried again')
  clock = 61_000
  await assert.rejects(cache.post('a', {}, 'r2'), (err: unknown) => err instanceof ProblemError && err.status === 504)
})

test('an answer without a version is revalidated by a regular call on every request, never by a version read', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')]]))
  const client: UpstreamClient = {
    ...upstream.client,
    get: async (path, options) => {
      const response = await upstream.client.get(path, options)
      const { 'posts-version': _version, ...headers } = response.headers
      return { ...response, headers }
    }
  }
  const cache = cacheOver(client)
  for (let i = 0; i < 3; i++) assert.equal(bodyOf(await cache.post('a', {}, `r${i}`)), post('a'))
  assert.equal(upstream.state.gets.length, 3)
  assert.equal(upstream.reads(), 0)
})

test('versions from another post API process than the label only mean revalidating by ETag, on every request', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')]]))
  let reads = 0
  // Two processes behind one base URL, answering in turn: their versions never match.
  const client: UpstreamClient = {
    ...upstream.client,
    get: async (path, options) => {
      upstream.state.current = upstream.state.gets.length % 2 === 0 ? 'p1.1' : 'p2.1'
      return await upstream.client.get(path, options)
    },
    version: async () => ({ status: 200, version: ++reads % 2 === 0 ? 'p1.1' : 'p2.1' })
  }
  const cache = cacheOver(client)
  for (let i = 0; i < 40; i++) assert.equal(bodyOf(await cache.post('a', {}, `r${i}`)), post('a'))
  // Each request after the first read a version (never the label's) and revalidated its copy.
  assert.equal(reads, 39)
  assert.equal(upstream.state.gets.length, 40)
  assert.ok(upstream.state.gets.slice(1).every(({ ifNoneMatch }) => ifNoneMatch !== undefined), 'every revalidation was conditional')
})

test('a post API restarted (another process, once) does not pause version reads', async () => {
  const upstream = versionedUpstream(new Map([['a', post('a')]]))
  let reads = 0
  const client: UpstreamClient = { ...upstream.client, version: async () => ({ status: 200, version: upstream.state.current }) }
  const counted: UpstreamClient = { ...client, version: async (from, id) => { reads++; return await client.version(from, id) } }
  const cache = cacheOver(counted)
  await cache.post('a', {}, 'warm')
  upstream.state.current = 'p9.1'
  for (let i = 0; i < 40; i++) await cache.post('a', {}, `r${i}`)
  assert.equal(reads, 40, 'every request confirmed its copy by a version read')
  assert.equal(upstream.state.gets.length, 2, 'one GET to relabel the copy after the restart')
})
