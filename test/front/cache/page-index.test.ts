// Pages from memory, through both tiers over a real SQLite
// store: once a list shape has been paged through often enough, the front answers its pages
// from the shape's keyed list, with the very status, bytes, Link and ETag the post API's pages
// give, without a page call upstream; a change of the posts is seen by the next request; a
// cursor the list does not hold goes upstream; an upstream without keyed lists is paged as before.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { buildPageIndex } from '../../../src/front/cache/page-index.js'
import { createProcessMetrics } from '../../../src/ops/metrics.js'
import { buildPostsApp } from '../../../src/posts-api/app.js'
import { encodeCursor, nextCursorIn } from '../../../src/contract/cursor.js'
import { etagOf } from '../../../src/http/representation.js'
import type { PostStore } from '../../../src/store/store.js'
import { openTestStore, seedTestStore, sqliteServer, type TestDatabase } from '../../helpers/databases.js'
import { testConfig } from '../../helpers/config.js'
import { json, startFakeUpstream } from '../../helpers/fake-upstream.js'
import { get } from '../../helpers/http.js'
import { logSink } from '../../helpers/log-sink.js'
import { listen, startFront, type RunningApp } from '../../helpers/tiers.js'

/** More than the front's INDEX_AFTER_CALLS (256) page calls of one shape. */
const CALLS_TO_INDEX = 300

let database: TestDatabase
let store: PostStore
let posts: RunningApp
let front: RunningApp
const postsLog = logSink('info')

/** The post API's requests so far whose URL matches. */
const calls = (url: RegExp): number => postsLog.lines.filter((line) => line.msg === 'request' && typeof line.url === 'string' && url.test(line.url)).length
const PAGE_CALL = /^\/api\/posts\?.*limit=/
const KEYED_CALL = /^\/api\/posts\/keyed/

before(async () => {
  database = await sqliteServer.create()
  await seedTestStore(database.location)
  // Ties on published_at (broken by slug bytes), undated posts (last), tags on some.
  const values = Array.from({ length: 60 }, (_, i) => {
    const at = i % 10 === 9 ? 'NULL' : `'2024-01-${String(1 + (i % 7)).padStart(2, '0')}T00:00:00.000Z'`
    const tags = i % 3 === 0 ? '\'["three"]\'' : '\'[]\''
    return `('p-${String(i).padStart(2, '0')}', 'Post ${i}', 'body ${i}', ${tags}, ${at})`
  })
  await database.exec(`INSERT INTO posts (slug, title, content, tags, published_at) VALUES ${values.join(', ')}`)
  store = await openTestStore(database.location)
  await store.checkSchema()
  const config = testConfig()
  posts = await listen(buildPostsApp({ store, logger: postsLog.logger, cacheControl: config.cacheControl, server: config.server }))
  // With metrics: the held copies are read from its /metrics.
  front = await startFront(new URL(posts.url), { metrics: createProcessMetrics() })
})
after(async () => {
  await front.app.close()
  await posts.app.close()
  await store.close()
  await database.drop()
})

interface PageAnswer { status: number, body: string, link: string | undefined, etag: string | undefined }

/** Every page of `search` (limit included) on `base` + `route`, following the Link headers. */
async function walk (base: string, route: string, search: string): Promise<PageAnswer[]> {
  const pages: PageAnswer[] = []
  let path: string | undefined = `${route}?${search}`
  while (path !== undefined) {
    const r = await get(base, path)
    const link = r.headers.link as string | undefined
    // The front links to its own route: the rest of the link must be the post API's.
    pages.push({ status: r.status, body: r.text, link: link?.replace(route, '/ROUTE'), etag: r.headers.etag as string | undefined })
    const next = link === undefined ? undefined : nextCursorIn(link)
    path = next == null ? undefined : `${route}?${search}&after=${encodeCursor(next)}`
  }
  return pages
}

/** The query string of the page after the first post of `shape`. */
async function secondPage (shape: string): Promise<string> {
  const next = nextCursorIn(String((await get(front.url, `/api/blog?limit=1${shape}`)).headers.link))
  assert.ok(next != null, `no second page of ${shape}`)
  return `limit=1${shape}&after=${encodeCursor(next)}`
}

/**
 * Pages the shape of `fields` (a `&fields=…&tag=…` suffix) after a cursor often enough for the
 * front to hold its keyed list, then waits until it answers a page nobody asked for without a
 * page call.
 */
async function indexShape (shape: string): Promise<void> {
  const second = await secondPage(shape)
  for (let i = 0; i < CALLS_TO_INDEX; i++) await get(front.url, `/api/blog?${second}`)
  for (let limit = 2; limit < 200; limit++) {
    const before = calls(PAGE_CALL)
    await get(front.url, `/api/blog?limit=${limit}${shape}`)
    if (calls(PAGE_CALL) === before) return
  }
  throw new Error(`the front never answered pages of ${shape} from memory`)
}

describe('a shape paged through often is answered from memory', () => {
  for (const [shape, limits] of [
    ['&fields=slug,title,published_at', [7, 1000]], ['&tag=three', [4]], ['', [11]],
    ['&fields=slug,tags&tag=three,C%2B%2B&tag_not=x&published_after=2024-01-02', [3]],
    // Sorted shapes: their cursors name their order; most posts have no updated_at (last).
    ['&sort=-title&fields=slug,title', [5]], ['&sort=updated_at&tag=three', [2]]
  ] as const) {
    test(`shape "${shape}": the post API's pages, byte for byte, without a page call`, async () => {
      const keyedBefore = calls(KEYED_CALL)
      await indexShape(shape)
      assert.equal(calls(KEYED_CALL), keyedBefore + 1, 'one keyed list fetched')
      for (const limit of limits) {
        const search = `limit=${limit}${shape}`
        const expected = await walk(posts.url, '/api/posts', search)
        const pageCalls = calls(PAGE_CALL)
        const fromMemory = await walk(front.url, '/api/blog', search)
        assert.equal(calls(PAGE_CALL), pageCalls, 'no page call upstream')
        assert.deepEqual(fromMemory, expected)
        assert.ok(expected.length > 1 || limit === 1000)
        // A page held in memory is revalidated by the ETag the post API gave it.
        const revalidated = await get(front.url, `/api/blog?${search}`, { 'if-none-match': expected[0]?.etag ?? '' })
        assert.equal(revalidated.status, 304)
      }
    })
  }

  test('a page from memory asked for a second time is held: then that copy (one more copy held, not one per request)', async () => {
    const shape = '&fields=slug,content'
    await indexShape(shape)
    const copies = async (): Promise<number> => {
      const held = /^blog_read_api_front_cache_copies (\d+)$/m.exec((await get(front.url, '/metrics')).text)?.[1]
      assert.ok(held !== undefined, 'the front counts its copies')
      return Number(held)
    }
    const held = await copies()
    const pageCalls = calls(PAGE_CALL)
    const first = await get(front.url, `/api/blog?limit=250${shape}`, { 'accept-encoding': 'gzip' })
    assert.equal(await copies(), held, 'a page asked for once is not held')
    for (let i = 0; i < 3; i++) {
      const again = await get(front.url, `/api/blog?limit=250${shape}`, { 'accept-encoding': 'gzip' })
      assert.deepEqual([again.status, again.headers.etag, again.headers.link, again.text], [200, first.headers.etag, first.headers.link, first.text])
    }
    assert.equal(await copies(), held + 1)
    assert.equal(calls(PAGE_CALL), pageCalls, 'no page call upstream')
  })

  test('a change of the posts shows in the next page, which goes upstream again', async () => {
    const shape = '&fields=slug,title'
    await indexShape(shape)
    await database.exec('INSERT INTO posts (slug, title, published_at) VALUES (\'newest\', \'Newest\', \'2030-01-01T00:00:00.000Z\')')
    try {
      const before = calls(PAGE_CALL)
      const page = await get(front.url, `/api/blog?limit=300${shape}`)
      assert.equal((page.json() as Array<{ slug: string }>)[0]?.slug, 'newest')
      assert.equal(calls(PAGE_CALL), before + 1, 'the held list was dropped: the page went upstream')
    } finally {
      await database.exec('DELETE FROM posts WHERE slug = \'newest\'')
    }
  })

  test('a counted page of a held shape goes upstream, with its X-Total-Count', async () => {
    const shape = '&tag=three'
    await indexShape(shape)
    const before = calls(PAGE_CALL)
    const page = await get(front.url, `/api/blog?limit=2${shape}&count=exact`)
    assert.equal(calls(PAGE_CALL), before + 1)
    assert.equal(page.headers['x-total-count'], (await get(posts.url, `/api/posts?limit=2${shape}&count=exact`)).headers['x-total-count'])
    assert.equal(page.headers['x-total-count'], String(((await get(posts.url, `/api/posts?${shape.slice(1)}`)).json() as unknown[]).length))
  })

  test('a cursor the list does not hold is answered upstream, as the post API pages', async () => {
    const shape = '&fields=slug'
    await indexShape(shape)
    const cursor = encodeCursor({ slug: 'p-000', publishedAt: '2024-01-03T00:00:00.000Z' })
    const before = calls(PAGE_CALL)
    const page = await get(front.url, `/api/blog?limit=3${shape}&after=${cursor}`)
    assert.equal(calls(PAGE_CALL), before + 1)
    const direct = await get(posts.url, `/api/posts?limit=3${shape}&after=${cursor}`)
    assert.equal(page.status, 200)
    assert.equal(page.text, direct.text)
  })
})

describe('when the keyed list is fetched', () => {
  test('first pages never count: a shape only ever read from its first page is held as a copy, its keyed list never fetched', async () => {
    const shape = '&fields=slug,published_at'
    const keyedBefore = calls(KEYED_CALL)
    for (let i = 0; i < CALLS_TO_INDEX; i++) assert.equal((await get(front.url, `/api/blog?limit=3${shape}`)).status, 200)
    assert.equal(calls(KEYED_CALL), keyedBefore)
  })
})

test('an upstream without keyed lists is paged as before, each page a call', async () => {
  const upstream = await startFakeUpstream((req, res) => {
    if ((req.url ?? '').startsWith('/api/posts?')) return json(res, 200, [{ slug: 'only', title: 'Only' }])
    json(res, 404, { title: 'Not found' })
  })
  const plain = await startFront(upstream.url)
  try {
    for (let i = 0; i < CALLS_TO_INDEX; i++) assert.equal((await get(plain.url, `/api/blog?limit=1&after=${encodeCursor({ slug: `s-${i}` })}`)).status, 200)
    const before = upstream.requests.length
    await get(plain.url, '/api/blog?limit=1&after=' + encodeCursor({ slug: 'again' }))
    assert.equal(upstream.requests.length, before + 1)
    assert.ok(upstream.requests.some((r) => (r.url ?? '').startsWith('/api/posts/keyed')), 'the keyed list was asked for')
  } finally {
    await plain.app.close()
    await upstream.close()
  }
})

describe('buildPageIndex', () => {
  const line = (cursor: string, post: string): string => `${cursor} ${post}\n`
  const a = encodeCursor({ slug: 'a' })
  const b = encodeCursor({ slug: 'b' })

  test('pages, the last one without a next link, past the end empty', async () => {
    const index = await buildPageIndex(Buffer.from(line(a, '{"slug":"a"}') + line(b, '{"slug":"b"}')))
    assert.ok(index !== undefined)
    const first = index.page(undefined, 1)
    assert.equal(first?.representation.body.toString(), '[{"slug":"a"}]')
    assert.deepEqual(first?.next, { slug: 'a' })
    assert.equal(index.page(a, 5)?.next, undefined)
    assert.equal(index.page(b, 5)?.empty, true)
    assert.equal(index.page(encodeCursor({ slug: 'c' }), 5), undefined)
  })

  test('every page is the posts after its cursor joined as a JSON array, its tag covering the next cursor (a model of the list)', async () => {
    const post = fc.record({ title: fc.string({ maxLength: 40 }), n: fc.integer() })
    await fc.assert(fc.asyncProperty(fc.array(post, { minLength: 1, maxLength: 40 }), fc.nat(), fc.integer({ min: 1, max: 50 }), async (bodies, from, limit) => {
      const slugs = bodies.map((_, i) => `p-${i}`)
      const texts = bodies.map((body, i) => JSON.stringify({ slug: slugs[i], ...body }))
      const index = await buildPageIndex(Buffer.from(texts.map((text, i) => line(encodeCursor({ slug: slugs[i] as string }), text)).join('')))
      assert.ok(index !== undefined)
      const last = from % (slugs.length + 1) - 1
      const page = index.page(last < 0 ? undefined : encodeCursor({ slug: slugs[last] as string }), limit)
      const end = Math.min(last + 1 + limit, slugs.length)
      const expected = Buffer.from(`[${texts.slice(last + 1, end).join(',')}]`)
      assert.deepEqual(page?.representation.body, expected)
      assert.equal(page?.empty, end === last + 1)
      if (end === slugs.length) {
        assert.equal(page?.next, undefined)
        assert.equal(page?.representation.etag, etagOf(expected))
      } else {
        assert.deepEqual(page?.next, { slug: slugs[end - 1] })
        assert.equal(page?.representation.etag, etagOf(expected, `\n${encodeCursor({ slug: slugs[end - 1] as string })}`))
      }
    }), { numRuns: 300 })
  })

  test('anything but lines of a cursor and a post is not indexed', async () => {
    for (const text of [line(a, '{"slug":1}'), line(a, '[1]'), line(a, 'nope'), `${a}{"slug":"a"}\n`, line(a, '{"slug":"a"}') + line(a, '{"slug":"b"}'), `${a} {"slug":"a"}`]) {
      assert.equal(await buildPageIndex(Buffer.from(text)), undefined, text)
    }
  })
})
