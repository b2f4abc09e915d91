// The fast lane answers as the framework does: two fronts over the same post API, one with the
// lane (the default) and one without, are asked the same generated requests over real HTTP
// (method, target, validators, encodings, origins, request ids), and must give the same status,
// headers and bytes, the same access lines and the same request metrics, in every CORS,
// cache-tag and SITE_URL configuration, on the list, the posts and the feeds. Outcomes the lane
// hands to the framework (an upstream failure, a copy served stale) cost no second upstream call.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import fc from 'fast-check'
import { Pool } from 'undici'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'
import { testConfig } from '../helpers/config.js'
import { createSeededSqlite, openTestStore, type TestDatabase } from '../helpers/databases.js'
import { json, startFakeUpstream } from '../helpers/fake-upstream.js'
import { accessLine, ask, requestCounts, type Answer, type ComparedServer } from '../helpers/compared-answers.js'
import { logSink } from '../helpers/log-sink.js'
import { listen, silentLogger, startFront, type FrontTestOptions, type RunningApp } from '../helpers/tiers.js'
import type { PostStore } from '../../src/store/store.js'

const ORIGIN = 'https://app.example'
const SITE = parseSiteUrl('https://blog.example/')
const FEEDS = { site: { url: SITE, postUrl: createPostUrl(SITE) }, postUrlTemplate: '{site}/blog/{slug}', feedSize: 20 }
const CONFIGURATIONS: ReadonlyArray<{ name: string, options: FrontTestOptions }> = [
  { name: 'the defaults (CORS for any origin, cache-tag headers), feeds', options: { feeds: FEEDS } },
  { name: 'CORS for listed origins, no cache-tag headers, feeds', options: { corsOrigins: [ORIGIN], cacheTagHeaders: [], feeds: FEEDS } },
  { name: 'no CORS, no SITE_URL (the feeds are 404s)', options: { corsOrigins: [] } }
]
const FEED_TARGETS = ['/feed.xml', '/feed.atom', '/feed.json', '/feed.xml?tag=sql', '/feed.json?tag=nosuchtag', '/feed.atom?limit=0', '/feed.xml?bogus=1', '/feed.xml/', '/feed.xmlx', '/feed.', '/sitemap.xml']

interface Front extends ComparedServer {
  app: RunningApp
}

async function startComparedFront (postsUrl: string, options: FrontTestOptions, fastLane: boolean): Promise<Front> {
  const sink = logSink('info')
  const metrics = createProcessMetrics()
  const app = await startFront(new URL(postsUrl), { ...options, logger: sink.logger, metrics, fastLane })
  return { app, pool: new Pool(app.url, { connections: 1 }), sink, metrics }
}

let database: TestDatabase
let store: PostStore
let posts: RunningApp
let slugs: string[]

before(async () => {
  database = await createSeededSqlite()
  store = await openTestStore(database.location)
  await store.checkSchema()
  posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger })))
  const list = await fetch(`${posts.url}/api/posts`)
  slugs = (await list.json() as Array<{ slug: string }>).map((p) => p.slug)
  assert.ok(slugs.length >= 3)
})
after(async () => {
  await posts.app.close()
  await store.close()
  await database.drop()
})

for (const { name, options } of CONFIGURATIONS) {
  describe(`with and without the lane: ${name}`, () => {
    let lane: Front
    let framework: Front
    before(async () => {
      lane = await startComparedFront(posts.url, options, true)
      framework = await startComparedFront(posts.url, options, false)
    })
    after(async () => {
      for (const front of [lane, framework]) {
        await front.pool.close()
        await front.app.app.close()
      }
    })

    test('the same answers, access lines and request metrics', async () => {
      // Validators the fronts will give, to ask with: each target's own, and its variants'.
      const etags: string[] = []
      const feeds = options.feeds === undefined ? [] : ['/feed.xml', '/feed.atom', '/feed.json']
      for (const path of ['/api/blog', '/api/blog?limit=2', ...slugs.flatMap((s) => [`/api/blog/${s}`, `/api/blog/${s}?formats=html`]), ...feeds]) {
        for (const encoding of ['identity', 'gzip', 'br']) {
          const [fast, slow] = [await ask(lane, 'GET', path, { 'accept-encoding': encoding }), await ask(framework, 'GET', path, { 'accept-encoding': encoding })]
          assert.equal(fast.status, 200, path)
          assert.equal(fast.headers.etag, slow.headers.etag)
          etags.push(String(slow.headers.etag))
        }
      }
      const target = fc.oneof(
        fc.constantFrom('/api/blog', '/api/blog?limit=2', '/api/blog?limit=1&sort=title', '/api/blog?tag=nosuchtag', '/api/blog?bogus=1', '/api/blog?limit=0'),
        fc.constantFrom(...slugs).map((slug) => `/api/blog/${slug}`),
        fc.tuple(fc.constantFrom(...slugs), fc.constantFrom('?formats=html', '?fields=slug,title&formats=text', '?fields=slug', '?', '?bogus=1', '?formats=pdf', '?preview=x', '?fields=slug&fields=title'))
          .map(([slug, query]) => `/api/blog/${slug}${query}`),
        fc.constantFrom('no-such-post', 'Not_A_Slug', 'a%62c', '..', '.', '', 'a;b', 'a.b', '~x', 'x'.repeat(201), 'hello-world/', `${slugs[0] ?? ''}?fields=slug`)
          .map((segment) => `/api/blog/${segment}`),
        fc.constantFrom(...FEED_TARGETS)
      )
      const headers = fc.record({
        'if-none-match': fc.constantFrom(...etags, '*', 'W/"other"', `${etags[0] ?? ''}, "x"`),
        'accept-encoding': fc.constantFrom('gzip', 'br', 'gzip;q=0, identity', 'br;q=0.5, gzip', '*', 'identity'),
        origin: fc.constantFrom(ORIGIN, 'https://other.example')
      }, { requiredKeys: [] })
      let n = 0
      await fc.assert(fc.asyncProperty(fc.constantFrom('GET', 'HEAD'), target, headers, async (method, path, sent) => {
        const id = `lane-${n++}`
        const withId = { ...sent, 'x-request-id': id }
        const [fast, slow] = [await ask(lane, method, path, withId), await ask(framework, method, path, withId)]
        assert.deepEqual({ status: fast.status, headers: fast.headers }, { status: slow.status, headers: slow.headers }, `${method} ${path} ${JSON.stringify(sent)}`)
        assert.ok(fast.body.equals(slow.body), `${method} ${path}: the same bytes`)
        assert.deepEqual(await accessLine(lane, id), await accessLine(framework, id))
      }), { numRuns: 300 })
      // A request without an id of its own gets a new one, the same in its header and its line.
      const fresh = await ask(lane, 'GET', `/api/blog/${slugs[0] ?? ''}`, {})
      assert.match(String(fresh.headers['x-request-id']), /^[0-9a-f-]{36}$/)
      await accessLine(lane, String(fresh.headers['x-request-id']))
      await ask(framework, 'GET', `/api/blog/${slugs[0] ?? ''}`, {})
      assert.deepEqual(await requestCounts(lane), await requestCounts(framework))
    })
  })
}

test('an outcome the lane hands over is not asked for again, and is answered as the framework answers it', async () => {
  let status = 200
  const upstream = await startFakeUpstream((req, res) => {
    if (status !== 200) return json(res, status, { title: 'Failed' })
    json(res, 200, req.url?.startsWith('/api/posts') === true ? [{ slug: 'a', title: 'A' }] : { slug: 'a' }, { etag: '"v1"' })
  })
  const fronts = await Promise.all([true, false].map(async (fastLane) => await startComparedFront(upstream.url.href, { staleIfErrorS: 60, feeds: FEEDS }, fastLane)))
  try {
    // A held copy, then the same served stale when the upstream fails (handed over); the upstream's
    // 404 is the post's own 404 (answered by the lane), and for the list a failure (stale again).
    // A feed is made from its list, handed over alike.
    const cases = { '/api/blog': [[200, 200], [500, 200], [404, 200]], '/api/blog/a': [[200, 200], [500, 200], [404, 404]], '/feed.xml': [[200, 200], [500, 200], [404, 200]] } as const
    for (const [path, statuses] of Object.entries(cases)) {
      for (const [upstreamStatus, expected] of statuses) {
        status = upstreamStatus
        const answers: Answer[] = []
        for (const front of fronts) {
          const before = upstream.requests.length
          answers.push(await ask(front, 'GET', path, { 'x-request-id': `handed-${upstreamStatus}` }))
          assert.equal(upstream.requests.length - before, 1, `${path} with the upstream at ${upstreamStatus}: one call`)
        }
        const [fast, slow] = answers as [Answer, Answer]
        assert.equal(fast.status, expected, `${path} with the upstream at ${upstreamStatus}`)
        if (upstreamStatus === 500) assert.match(String(fast.headers['cache-status']), /fwd=stale/)
        assert.deepEqual({ status: fast.status, headers: fast.headers }, { status: slow.status, headers: slow.headers }, `${path} with the upstream at ${upstreamStatus}`)
        assert.ok(fast.body.equals(slow.body))
      }
    }
  } finally {
    for (const front of fronts) {
      await front.pool.close()
      await front.app.app.close()
    }
    await upstream.close()
  }
})
