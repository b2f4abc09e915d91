// Every answer made from the posts, beyond the list and the detail, run against every store: at a
// scheduled instant the feeds, the sitemap, the tag counts and the counts gain the post with no
// write, and no answer of either tier, on any route, lets a cache keep it past the instant.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { TestDatabase, TestServer } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { createClock, createTable, startPublishingTiers } from './publishing-fixture.js'
import { NOW, ROWS, SCHEDULED_AT } from './publishing-suite.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const SITE = 'https://blog.example/'
const LONG = 'public, max-age=86400, s-maxage=86400'

/** Every max-age and s-maxage of the answer's Cache-Control. */
const maxAgesOf = (response: TestResponse): number[] =>
  [...String(response.headers['cache-control'] ?? '').matchAll(/(?:s-maxage|max-age)=(\d+)/g)].map((match) => Number(match[1]))

type Probe = (answer: TestResponse) => boolean
const holds = (text: string): Probe => (answer) => answer.text.includes(text)
const tagged = (tag: string): Probe => (answer) => (answer.json() as Array<{ tag: string }>).some((entry) => entry.tag === tag)
const total = (count: number): Probe => (answer) => answer.headers['x-total-count'] === String(count)

export function describeDerivedAnswers (name: string, server: TestServer): void {
  describeOrSkip(`answers made from the posts at a scheduled instant on ${name}`, { skip: server.skip }, () => {
    let database: TestDatabase
    before(async () => {
      database = await server.create()
      await createTable(database, ROWS)
    })
    after(async () => { await database?.drop() })

    test('the feeds, the sitemap, the tag counts and the counts gain a scheduled post at its instant with no write, each capped at it', async () => {
      const clock = createClock(NOW)
      const tiers = await startPublishingTiers(database, { publishedOnly: true, clock, cacheControl: LONG, settings: { SITE_URL: SITE } })
      const { front, posts } = tiers
      // Whether each answer holds the scheduled post.
      const routes: Array<[base: string, path: string, scheduledIn: Probe]> = [
        ...['/feed.xml', '/feed.atom', '/feed.json', '/sitemap.xml'].map((path): [string, string, Probe] => [front.url, path, holds(`${SITE}blog/scheduled`)]),
        [front.url, '/feed.xml?tag=launch', holds(`${SITE}blog/scheduled`)],
        [front.url, '/api/tags', tagged('launch')], [posts.url, '/api/posts/tags', tagged('launch')],
        [front.url, '/api/blog?count=exact&limit=1', total(4)], [posts.url, '/api/posts?count=exact&limit=1', total(4)],
        [front.url, '/api/blog?tag=news&count=exact&fields=slug', total(3)], [posts.url, '/api/posts?tag=news&count=exact&fields=slug', total(3)]
      ]
      try {
        for (const [at, visible, maxAge] of [[NOW, false, 3600], [SCHEDULED_AT - 118_000, false, 118], [SCHEDULED_AT - 1, false, 0], [SCHEDULED_AT, true, 86400]] as const) {
          clock.set(at)
          for (const [base, path, scheduledIn] of routes) {
            // Twice: the second answer comes from what the first left held (bodies, copies, documents).
            for (let i = 0; i < 2; i++) {
              const answer = await get(base, path)
              const where = `${base === front.url ? 'front' : 'post API'} ${path} at ${at - NOW} ms`
              assert.equal(answer.status, 200, `${where}: ${answer.text}`)
              assert.equal(scheduledIn(answer), visible, where)
              assert.deepEqual(maxAgesOf(answer), [maxAge, maxAge], where)
            }
          }
        }
      } finally {
        await tiers.close()
      }
    })

    test('every GET route of both tiers, and the list\'s queries, caps max-age and s-maxage at the seconds left until the instant', async () => {
      const clock = createClock(SCHEDULED_AT - 118_000)
      const routes: Record<'posts' | 'front', string[]> = { posts: [], front: [] }
      const tiers = await startPublishingTiers(database, {
        publishedOnly: true,
        clock,
        cacheControl: LONG,
        settings: { SITE_URL: SITE },
        // Every route each app declares, as it declares it: a route added later is swept too.
        beforeListen: (tier, app) => app.addHook('onRoute', ({ method, url }) => {
          if ([method].flat().includes('GET') && !url.includes('*')) routes[tier].push(url)
        })
      })
      const queries = ['', '?count=exact', '?limit=1', '?tag=news', '?fields=slug,title', '?sort=slug', '?q=live', '?published_after=2020-01-01']
      const served = new Set<string>()
      try {
        for (const [tier, base, list] of [['front', tiers.front.url, '/api/blog'], ['posts', tiers.posts.url, '/api/posts']] as const) {
          assert.ok(routes[tier].includes(list), JSON.stringify(routes))
          const paths = [...routes[tier].map((route) => route.replace(':slug', 'live').replace(':page', '1.xml')), ...queries.map((query) => list + query)]
          for (const path of paths) {
            for (let i = 0; i < 2; i++) {
              const answer = await get(base, path)
              const where = `${tier} ${path}: ${String(answer.headers['cache-control'])}`
              assert.ok(maxAgesOf(answer).every((seconds) => seconds <= 118), where)
              if (answer.status !== 200 || typeof answer.headers.etag !== 'string') continue
              if (maxAgesOf(answer).length > 0) served.add(`${tier} ${path}`)
              const revalidated = await get(base, path, { 'if-none-match': answer.headers.etag })
              assert.equal(revalidated.status, 304, where)
              assert.ok(maxAgesOf(revalidated).every((seconds) => seconds <= 118), `${where} (304)`)
            }
          }
        }
        // The sweep reached the answers a cache may keep, each with the capped max-age.
        for (const route of ['front /api/blog', 'front /api/blog/live', 'front /api/tags', 'front /feed.xml', 'front /feed.atom', 'front /feed.json',
          'front /sitemap.xml', 'front /api/blog?count=exact', 'front /api/blog?q=live', 'posts /api/posts', 'posts /api/post/live', 'posts /api/posts/tags']) {
          assert.ok(served.has(route), `${route} answered 200 with a max-age: ${JSON.stringify([...served])}`)
        }
      } finally {
        await tiers.close()
      }
    })
  })
}
