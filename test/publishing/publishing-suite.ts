// One suite, run against every store: the publishing rule through both tiers over a real table
// holding drafts, unpublished, in-review, deleted, undated and scheduled rows.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { KEYED_LIST_PATH } from '../../src/contract/keyed-list.js'
import { mintPreviewToken } from '../../src/publishing/preview-token.js'
import { reportPublishing } from '../../src/publishing/startup-report.js'
import { describeMigration } from '../../src/cli/store-commands.js'
import { openTestStore } from '../helpers/databases.js'
import type { TestDatabase, TestServer } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { logSink } from '../helpers/log-sink.js'
import { assertProblem } from '../helpers/problem.js'
import { createClock, createTable, startPublishingTiers, type Row } from './publishing-fixture.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

export const NOW = Date.parse('2025-06-01T12:00:00.000Z')
export const HOUR = 3_600_000
const DAY = 24 * HOUR
export const SCHEDULED_AT = NOW + HOUR

const past = NOW - DAY
export const ROWS: Row[] = [
  { slug: 'live', draft: false, published: true, status: 'published', publishedAt: past - DAY, tags: ['news'] },
  { slug: 'null-flags', draft: null, published: null, status: 'PUBLISHED', publishedAt: past, cover: 'cafe', tags: ['news'] },
  { slug: 'a-draft', draft: true, published: true, status: 'published', publishedAt: past, tags: ['secret'] },
  { slug: 'unpublished', draft: false, published: false, status: 'published', publishedAt: past },
  { slug: 'in-review', draft: false, published: true, status: 'review', publishedAt: past },
  { slug: 'deleted', draft: false, published: true, status: 'published', publishedAt: past, deletedAt: past },
  { slug: 'undated', draft: false, published: true, status: 'published', publishedAt: null },
  { slug: 'scheduled', draft: false, published: true, status: 'Published', publishedAt: SCHEDULED_AT, tags: ['news', 'launch'] },
  { slug: 'Legacy-Case', draft: false, published: true, status: 'published', publishedAt: past - 2 * DAY }
]
const PUBLIC_NOW = ['null-flags', 'live', 'Legacy-Case']
const HIDDEN_NOW = ROWS.map((row) => row.slug).filter((slug) => !PUBLIC_NOW.includes(slug))

export const slugsOf = (response: TestResponse): string[] => (response.json() as Array<{ slug: string }>).map((post) => post.slug)

/**
 * The headers a 404 of a hidden post and of a missing one must share: all but the per-request ones
 * (date, request id, the version's value), and each names its own slug's cache tag.
 */
function sameAnswer (hidden: TestResponse, missing: TestResponse): void {
  // The posts version labels the store's state when each was read: present on both, equal unless
  // the store moved between them (PostgreSQL's moves with any transaction on the server).
  const strip = (headers: TestResponse['headers']): Record<string, unknown> => {
    const { date: _date, 'x-request-id': _id, 'posts-version': version, 'surrogate-key': key, 'cache-tag': tag, ...rest } = headers
    const tags = [key, tag].map((value) => String(value).replace(/^post-.*$/, 'post-SLUG'))
    return { ...rest, 'posts-version': version === undefined ? 'absent' : 'present', tags }
  }
  assert.equal(hidden.status, missing.status)
  assert.equal(hidden.text.replace('hidden-slug', 'SLUG'), missing.text.replace('missing-slug', 'SLUG'))
  assert.deepEqual(strip(hidden.headers), strip(missing.headers))
}

/** Every page of `path` (limit 2), following `Link: rel=next`. */
export async function walkPages (base: string, path: string): Promise<string[]> {
  const slugs: string[] = []
  let next: string | undefined = `${path}?limit=2`
  while (next !== undefined) {
    const page = await get(base, next)
    assert.equal(page.status, 200, page.text)
    slugs.push(...slugsOf(page))
    next = /<([^>]+)>;\s*rel="next"/.exec(String(page.headers.link ?? ''))?.[1]
  }
  return slugs
}

export function describePublishing (name: string, server: TestServer): void {
  describeOrSkip(`publishing rules on ${name}`, { skip: server.skip }, () => {
    let database: TestDatabase
    before(async () => {
      database = await server.create()
      await createTable(database, ROWS)
    })
    after(async () => { await database?.drop() })

    test('by default every row is served, and the start-up log says once what PUBLISHED_ONLY would hide', async () => {
      const tiers = await startPublishingTiers(database, { publishedOnly: false, clock: createClock(NOW) })
      try {
        for (const [base, path] of [[tiers.front.url, '/api/blog'], [tiers.posts.url, '/api/posts']] as const) {
          assert.deepEqual(slugsOf(await get(base, path)).sort(), ROWS.map((row) => row.slug).sort())
        }
        assert.equal((await get(tiers.posts.url, '/api/post/a-draft')).status, 200)
        // A binary column is absent from every post, whether it holds bytes or NULL: one shape.
        for (const [base, path] of [[tiers.front.url, '/api/blog'], [tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog/null-flags'], [tiers.posts.url, '/api/post/live']] as const) {
          const answer = await get(base, path)
          assert.equal(answer.status, 200)
          assert.doesNotMatch(answer.text, /"cover"/, `${base}${path}`)
        }
        assert.deepEqual(Object.keys((await get(tiers.posts.url, '/api/post/live')).json() as object).sort(),
          ['deleted_at', 'draft', 'published', 'published_at', 'slug', 'status', 'tags', 'title'])
        const { logger, lines } = logSink('info')
        await reportPublishing(tiers.store, { publishedOnly: false, slugPattern: /^[a-z0-9]+(?:-[a-z0-9]+)*$/ }, logger)
        const warnings = lines.filter((line) => line.level === 40)
        const rule = warnings.filter((line) => /PUBLISHED_ONLY/.test(line.msg ?? ''))
        assert.equal(rule.length, 1, JSON.stringify(lines))
        assert.match(rule[0]?.msg ?? '', new RegExp(`would hide ${HIDDEN_NOW.length} rows by published_at, draft, published, status, deleted_at`))
        const slugs = warnings.filter((line) => /SLUG_PATTERN/.test(line.msg ?? ''))
        assert.equal(slugs.length, 1)
        assert.match(slugs[0]?.msg ?? '', /^1 row of posts has a slug the front refuses \(SLUG_PATTERN /)
      } finally {
        await tiers.close()
      }
    })

    test('PUBLISHED_ONLY hides unpublished rows from every read of both tiers, a hidden post exactly a missing one', async () => {
      const tiers = await startPublishingTiers(database, { publishedOnly: true, clock: createClock(NOW) })
      try {
        assert.deepEqual(slugsOf(await get(tiers.front.url, '/api/blog')), PUBLIC_NOW)
        assert.deepEqual(slugsOf(await get(tiers.posts.url, '/api/posts')), PUBLIC_NOW)
        assert.deepEqual(slugsOf(await get(tiers.posts.url, '/api/posts?fields=slug,title')), PUBLIC_NOW)
        assert.deepEqual(await walkPages(tiers.posts.url, '/api/posts'), PUBLIC_NOW)
        assert.deepEqual(await walkPages(tiers.front.url, '/api/blog'), PUBLIC_NOW)
        for (const [base, path] of [[tiers.front.url, '/api/blog'], [tiers.posts.url, '/api/posts']] as const) {
          assert.equal((await get(base, `${path}?count=exact&limit=1`)).headers['x-total-count'], String(PUBLIC_NOW.length), `${path}: the count counts only what the list shows`)
        }
        const keyed = await get(tiers.posts.url, KEYED_LIST_PATH)
        assert.deepEqual(keyed.text.trimEnd().split('\n').map((line) => JSON.parse(line.slice(line.indexOf(' ') + 1)).slug), PUBLIC_NOW)
        for (const slug of HIDDEN_NOW.filter((s) => s !== 'Legacy-Case')) {
          for (const [base, path] of [[tiers.front.url, '/api/blog/'], [tiers.posts.url, '/api/post/']] as const) {
            const hidden = await get(base, path + slug)
            assertProblem(hidden, 'post-not-found')
            // A missing slug of the same length, so that no header differs by a length.
            const missing = await get(base, path + 'x'.repeat(slug.length))
            const relabel = (r: TestResponse): TestResponse => ({ ...r, text: r.text.replaceAll(slug, 'hidden-slug').replaceAll('x'.repeat(slug.length), 'missing-slug') })
            sameAnswer(relabel(hidden), relabel(missing))
          }
        }
        assert.equal((await get(tiers.front.url, '/api/blog/live')).status, 200)
        const { logger, lines } = logSink('info')
        await reportPublishing(tiers.store, { publishedOnly: true, slugPattern: /^[a-z0-9]+(?:-[a-z0-9]+)*$/ }, logger)
        const rule = lines.filter((line) => /PUBLISHED_ONLY/.test(line.msg ?? ''))
        assert.equal(rule.length, 1)
        assert.match(rule[0]?.msg ?? '', /deciding columns published_at, draft, published, status, deleted_at; 6 rows hidden now/)
      } finally {
        await tiers.close()
      }
    })

    test('previews: a valid token shows a hidden post, private and never held; a bad token is the missing post\'s 404; no secret, a 400', async () => {
      const secret = 'a-preview-secret-of-at-least-32-characters'
      const clock = createClock(NOW)
      const tiers = await startPublishingTiers(database, { publishedOnly: true, clock, previewSecret: secret, cacheControl: 'public, max-age=60' })
      const routes = [[tiers.front.url, '/api/blog/'], [tiers.posts.url, '/api/post/']] as const
      try {
        const token = mintPreviewToken(secret, 'a-draft', NOW + HOUR)
        for (const [base, path] of routes) {
          const preview = await get(base, `${path}a-draft?preview=${token}`)
          assert.equal(preview.status, 200, preview.text)
          assert.equal((preview.json() as { slug: string }).slug, 'a-draft')
          assert.equal(preview.headers['cache-control'], 'private, no-store')
          // Never held: the public route still hides it, and a public post previewed leaves no private copy behind.
          assertProblem(await get(base, `${path}a-draft`), 'post-not-found')
          assert.equal((await get(base, `${path}live?preview=${mintPreviewToken(secret, 'live', NOW + HOUR)}`)).headers['cache-control'], 'private, no-store')
          assert.equal((await get(base, `${path}live`)).headers['cache-control'], 'public, max-age=60')
          const bad = {
            forged: `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`,
            expired: mintPreviewToken(secret, 'a-draft', NOW - 1000),
            'another slug': mintPreviewToken(secret, 'live', NOW + HOUR),
            'another secret': mintPreviewToken(`${secret}!`, 'a-draft', NOW + HOUR),
            empty: ''
          }
          for (const [name, forged] of Object.entries(bad)) {
            const refused = await get(base, `${path}a-draft?preview=${forged}`)
            assertProblem(refused, 'post-not-found')
            sameAnswer(refused, await get(base, `${path}xxxxxxx`))
            assert.equal(refused.status, 404, name)
          }
        }
        // The token expires by the post API's clock.
        clock.set(NOW + HOUR)
        assertProblem(await get(tiers.front.url, `/api/blog/a-draft?preview=${token}`), 'post-not-found')
      } finally {
        await tiers.close()
      }
      const without = await startPublishingTiers(database, { publishedOnly: true, clock: createClock(NOW) })
      try {
        for (const [base, path] of [[without.front.url, '/api/blog/'], [without.posts.url, '/api/post/']] as const) {
          assertProblem(await get(base, `${path}a-draft?preview=${mintPreviewToken(secret, 'a-draft', NOW + HOUR)}`), 'invalid-query')
        }
      } finally {
        await without.close()
      }
    })

    test('migrate says what it adds to an existing table', async () => {
      const db = await server.create()
      try {
        const { dialect } = db.location
        await db.exec('CREATE TABLE posts (slug VARCHAR(100) NOT NULL PRIMARY KEY, title VARCHAR(100), published_at VARCHAR(40))')
        const again = await openTestStore(db.location, { writable: true })
        try {
          const first = await again.migrate()
          const expected = {
            sqlite: ['index posts_newest_first', 'table blog_read_api_changes', 'trigger blog_read_api_posts_deleted', 'trigger blog_read_api_posts_inserted', 'trigger blog_read_api_posts_updated'],
            postgres: ['index posts_newest_first'],
            mysql: []
          }[dialect]
          assert.deepEqual(first, { posts: 'table', added: expected })
          assert.deepEqual(await again.migrate(), { posts: 'table', added: [] })
          assert.match(describeMigration({ posts: 'table', added: [] }, 'X'), /^the posts table is ready in X: it had everything, nothing added$/)
        } finally {
          await again.close()
        }
      } finally {
        await db.drop()
      }
    })
  })
}
