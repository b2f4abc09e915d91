// The typed client's sync() and watch() against a fake front on loopback that answers the change
// routes as documented: a copy kept by sync() holds exactly the front's posts after any commits
// (adds, edits, renames, deletions) and after its token expired (410: it starts again); watch()
// yields each change, resumes after a cut with Last-Event-ID (the gap as one event), says when the
// state it resumed from is forgotten, waits out 503s, gives up on other errors, reconnects a
// silent stream, and stops on break or abort.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { BlogApiProblem, createBlogClient, createPostCopy, type PostCopy, type WatchEvent } from '../../packages/client/src/index.js'
import { startFakeChanges, type FakeChanges, type FakePost } from '../helpers/fake-changes.js'
import { pollUntil } from '../helpers/poll.js'

interface MyPost { slug: string, title: string, body?: string }

const INITIAL: FakePost[] = [{ slug: 'a', title: 'A', body: 'one' }, { slug: 'b', title: 'B', body: 'two' }]

/** The copy's posts, and the front's, in slug order. */
const sorted = (posts: ReadonlyMap<string, unknown>): Array<[string, unknown]> => [...posts].sort(([a], [b]) => a < b ? -1 : 1)

/** The next event, or a failure after 5 s (rather than the test's whole time-out). */
async function next (events: AsyncIterator<WatchEvent>): Promise<WatchEvent> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => reject(new Error('no event within 5 s')), 5000) })
  try {
    const result = await Promise.race([events.next(), late])
    assert.ok(result.done !== true, 'the watch ended')
    return result.value
  } finally {
    clearTimeout(timer)
  }
}

describe('sync()', () => {
  let front: FakeChanges
  before(async () => { front = await startFakeChanges(INITIAL) })
  after(async () => { await front?.close() })

  test('a copy holds exactly the front\'s posts after any commits, and starts again when its token expired', async () => {
    const blog = createBlogClient<MyPost>({ baseUrl: front.url })
    const slug = fc.constantFrom('a', 'b', 'c', 'd', 'web-dev')
    const step = fc.oneof(
      fc.record({ kind: fc.constant('put' as const), slug, title: fc.string({ maxLength: 5 }) }),
      fc.record({ kind: fc.constant('delete' as const), slug }),
      fc.record({ kind: fc.constant('rename' as const), slug, to: slug }),
      fc.record({ kind: fc.constant('sync' as const) }),
      fc.record({ kind: fc.constant('forget' as const) })
    )
    await fc.assert(fc.asyncProperty(fc.array(step, { maxLength: 12 }), async (steps) => {
      const copy: PostCopy<MyPost> = createPostCopy()
      let forgotten = true
      for (const each of [...steps, { kind: 'sync' as const }]) {
        if (each.kind === 'put') front.commit((posts) => { posts.set(each.slug, { slug: each.slug, title: each.title }) })
        if (each.kind === 'delete') front.commit((posts) => { posts.delete(each.slug) })
        if (each.kind === 'rename') {
          front.commit((posts) => {
            const post = posts.get(each.slug)
            if (post === undefined) return
            posts.delete(each.slug)
            posts.set(each.to, { ...post, slug: each.to })
          })
        }
        if (each.kind === 'forget') {
          // The head stays known: a copy that holds it is not reset.
          if (copy.token !== front.headToken()) forgotten = true
          front.forget()
        }
        if (each.kind !== 'sync') continue
        const change = await blog.sync({ copy })
        assert.equal(change.reset, forgotten, 'reset exactly when the copy\'s state was unknown')
        forgotten = false
        assert.equal(copy.token, front.headToken())
        assert.equal(change.until, front.headToken())
        assert.deepEqual(sorted(copy.posts), sorted(front.head()))
      }
    }), { numRuns: 60 })
  })

  test('without a copy: since and fields go on the query, and the answer says what changed', async () => {
    const blog = createBlogClient<MyPost>({ baseUrl: new URL(front.url) })
    const first = await blog.sync({ fields: ['title'], formats: ['html'] })
    assert.equal(first.reset, true)
    assert.equal(first.since, undefined)
    assert.ok(first.upserted.every((post) => Object.keys(post).join() === 'slug,title'))
    const token = front.commit((posts) => {
      posts.set('new', { slug: 'new', title: 'New', body: 'x' })
      posts.delete('a')
    })
    const second = await blog.sync({ since: first.until, fields: ['title'] })
    assert.deepEqual(second, { reset: false, since: first.until, until: token, upserted: [{ slug: 'new', title: 'New' }], deleted: first.upserted.some((post) => post.slug === 'a') ? ['a'] : [] })
    assert.deepEqual(front.jsonQueries.slice(-2), ['?fields=title&formats=html', `?since=${first.until}&fields=title`])
    front.forget()
    front.commit(() => {})
    const expired = await blog.sync({ since: first.until })
    assert.equal(expired.reset, true)
    assert.deepEqual(expired.deleted, [])
    assert.deepEqual(front.jsonQueries.slice(-2), [`?since=${first.until}`, ''])
  })

  test('another error is the front\'s problem; an answer of the wrong shape is refused', async () => {
    const missing = createBlogClient({ baseUrl: new URL('/nowhere/', front.url) })
    await assert.rejects(missing.sync(), (err: unknown) => err instanceof BlogApiProblem && err.status === 404)
    const wrong = createBlogClient({ baseUrl: front.url, fetch: async () => new Response(JSON.stringify({ until: 't', upserted: [{ title: 'no slug' }], deleted: [] })) })
    await assert.rejects(wrong.sync({ copy: createPostCopy() }), TypeError)
  })
})

describe('watch()', () => {
  let front: FakeChanges
  before(async () => { front = await startFakeChanges(INITIAL) })
  after(async () => { await front?.close() })

  test('each change; after a cut, Last-Event-ID resumes it with the gap as one event; a forgotten state is `expired`', async () => {
    const blog = createBlogClient<MyPost>({ baseUrl: front.url })
    const copy = createPostCopy<MyPost>()
    await blog.sync({ copy })
    const errors: unknown[] = []
    const events = blog.watch({ since: copy.token, retryMs: 1, onError: (err) => errors.push(err) })
    const opened = front.streamRequests.length
    const first = front.commit((posts) => { posts.set('c', { slug: 'c', title: 'C' }) })
    assert.deepEqual(await next(events), { type: 'change', since: copy.token, until: first, upserted: ['c'], deleted: [] })
    assert.deepEqual(front.streamRequests[opened], { since: undefined, lastEventId: copy.token }, 'the copy\'s token, as Last-Event-ID')
    await pollUntil('the stream is open', () => front.openStreams() === 1)

    front.dropStreams()
    front.commit((posts) => { posts.delete('a') })
    const third = front.commit((posts) => { posts.set('b', { slug: 'b', title: 'B, again' }) })
    assert.deepEqual(await next(events), { type: 'change', since: first, until: third, upserted: ['b'], deleted: ['a'] })
    assert.deepEqual(front.streamRequests.at(-1), { since: undefined, lastEventId: first })
    assert.equal(errors.length, 1, 'the cut, told')

    await pollUntil('the stream is open again', () => front.openStreams() === 1)
    front.forget()
    front.commit(() => {})
    front.forget()
    front.dropStreams()
    assert.deepEqual(await next(events), { type: 'expired' })
    // The copy starts again by itself, and the stream goes on from the front's head.
    assert.equal((await blog.sync({ copy })).reset, true)
    assert.deepEqual(sorted(copy.posts), sorted(front.head()))
    const last = front.commit((posts) => { posts.delete('c') })
    assert.deepEqual(await next(events), { type: 'change', since: copy.token, until: last, upserted: [], deleted: ['c'] })
    await events.return()
    await pollUntil('break closes the stream', () => front.openStreams() === 0)
  })

  test('a copy kept live: sync() on each event holds the front\'s posts', async () => {
    const blog = createBlogClient<MyPost>({ baseUrl: front.url })
    const copy = createPostCopy<MyPost>()
    await blog.sync({ copy })
    const stop = new AbortController()
    let seen = 0
    const live = (async () => {
      for await (const event of blog.watch({ since: copy.token, signal: stop.signal, retryMs: 1 })) {
        await blog.sync({ copy })
        seen += event.type === 'change' ? 1 : 0
      }
    })()
    for (let i = 0; i < 5; i++) {
      front.commit((posts) => { posts.set(`live-${i}`, { slug: `live-${i}`, title: String(i) }) })
      if (i === 2) front.dropStreams()
    }
    await pollUntil('the copy caught up', () => copy.token === front.headToken())
    assert.deepEqual(sorted(copy.posts), sorted(front.head()))
    stop.abort()
    await live
    assert.ok(seen >= 1)
  })

  test('a 410 answer starts over without a token; 503s are waited out; another error ends the watch', async () => {
    const blog = createBlogClient({ baseUrl: front.url })
    const errors: unknown[] = []
    front.failStreams({ status: 410 }, { status: 503, headers: { 'retry-after': '0' } })
    const events = blog.watch({ since: 'gone', retryMs: 1, onError: (err) => errors.push(err) })
    const from = front.streamRequests.length
    assert.deepEqual(await next(events), { type: 'expired' })
    // The watch connects again when asked for its next event (an async generator runs on demand).
    const pending = next(events)
    await pollUntil('a stream open after the 503', () => front.openStreams() === 1)
    const joined = front.headToken()
    front.commit(() => {})
    const change = await pending
    assert.equal(change.type === 'change' && change.since, joined)
    assert.deepEqual(front.streamRequests.slice(from).map((request) => request.lastEventId), ['gone', undefined, undefined])
    assert.ok(errors.length === 1 && errors[0] instanceof BlogApiProblem && errors[0].status === 503 && errors[0].retryAfter === '0')
    await events.return()

    front.failStreams({ status: 400 })
    await assert.rejects(blog.watch({ retryMs: 1 }).next(), (err: unknown) => err instanceof BlogApiProblem && err.status === 400)
  })

  test('an answer that is no event stream is a failure, tried again', async () => {
    const answers = [
      new Response('[]', { headers: { 'content-type': 'application/json' } }),
      new Response('retry: 1\nid: b\ndata: {"since":"a","until":"b","upserted":["x"],"deleted":[]}\n\n', { headers: { 'content-type': 'text/event-stream' } })
    ]
    const errors: unknown[] = []
    const fetch = async (): Promise<Response> => answers.shift() ?? new Response(null, { status: 503 })
    const events = createBlogClient({ baseUrl: 'http://blog.invalid/', fetch }).watch({ retryMs: 1, onError: (err) => errors.push(err) })
    assert.deepEqual(await next(events), { type: 'change', since: 'a', until: 'b', upserted: ['x'], deleted: [] })
    assert.ok(errors[0] instanceof TypeError)
    await events.return()
  })

  test('a stream silent past silenceMs is opened again; abort ends the watch', async () => {
    const blog = createBlogClient({ baseUrl: front.url })
    front.silence(true)
    const from = front.streamRequests.length
    const stop = new AbortController()
    const errors: unknown[] = []
    const watching = (async () => {
      const events: WatchEvent[] = []
      for await (const event of blog.watch({ signal: stop.signal, retryMs: 1, silenceMs: 50, onError: (err) => errors.push(err) })) events.push(event)
      return events
    })()
    await pollUntil('three connections', () => front.streamRequests.length - from >= 3)
    front.silence(false)
    stop.abort()
    assert.deepEqual(await watching, [])
    assert.ok(errors.length >= 2)
  })
})
