// The list queries on every store, through both tiers: keyset pages that walk the list exactly
// once (ties, undated posts, PostgreSQL microseconds), stable under inserts at the head, the
// keyed list, `tag`, a table without some columns, neighbour links; the parameters and their
// values in list-parameters-contract.ts. Part of the store contract suite.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { encodeCursor } from '../../src/contract/cursor.js'
import type { TestDatabase, TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { declareListParameterTests } from './list-parameters-contract.js'
import { DATED, nextTarget, ROUTES, slugsOf, useListQuerySuite, walk, type ListQueryFixture } from './list-query-suite.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

export function describeListQueryContract (name: string, server: TestServer, fixture: ListQueryFixture): void {
  describeOrSkip(`${name} list queries`, { skip: server.skip }, () => {
    const suite = useListQuerySuite(server, fixture)
    const { insert, serving, withDefaultTable, withTiers } = suite
    let db: TestDatabase
    before(() => { db = suite.db() })

    test('pages walk the whole list exactly once, in its order (ties, undated, microseconds), on both tiers', async () => {
      await withDefaultTable(DATED, async (tiers) => {
        const whole = slugsOf(await get(tiers.posts.url, '/api/posts'))
        assert.equal(whole.length, DATED.length)
        assert.deepEqual(whole.slice(0, 5), ['newest', 'Zed', 'a-b', 'a1', 'alpha'])
        assert.deepEqual(whole.slice(-3), ['draft-a', 'draft-b', 'draft-c'])
        for (const tier of ['posts', 'front'] as const) {
          for (const limit of [1, 2, 3, 4, 11, 1000]) {
            const { slugs, pages } = await walk(tiers, tier, `limit=${limit}`, limit)
            assert.deepEqual(slugs, whole, `${tier}, limit ${limit}`)
            // A last page that is full has no link: no empty page at the end.
            assert.equal(pages, Math.ceil(whole.length / limit), `${tier}, limit ${limit}`)
          }
          // The cursor carries the sort key whatever columns are served.
          assert.deepEqual((await walk(tiers, tier, 'limit=2&fields=title', 2)).slugs, whole)
        }
        // Same bytes as the whole list, sliced.
        const first = await get(tiers.front.url, '/api/blog?limit=3')
        assert.deepEqual(first.json(), ((await get(tiers.front.url, '/api/blog')).json() as unknown[]).slice(0, 3))
      })
    })

    test('the keyed list: every post of a shape after the cursor its page link gives, the same bytes as the list, labelled', async () => {
      await withDefaultTable(DATED, async (tiers) => {
        for (const shape of ['', '&fields=title,published_at', '&tag=t1']) {
          const whole = await get(tiers.posts.url, `/api/posts?${shape.slice(1)}`)
          const versionNow = async (): Promise<string | null> => ((await get(tiers.posts.url, '/api/posts/version')).json() as { version: string | null }).version
          const versionBefore = await versionNow()
          const keyed = await get(tiers.posts.url, `/api/posts/keyed?limit=2${shape}`)
          const version = await versionNow()
          assert.equal(keyed.status, 200)
          assert.equal(keyed.headers['content-type'], 'text/plain; charset=utf-8')
          assert.equal(keyed.headers['cache-control'], 'no-store')
          // Labelled as every answer is, when the store tracks changes (PostgreSQL's version moves
          // with any transaction on the server: compared when nothing moved it meanwhile).
          assert.equal(keyed.headers['posts-version'] === undefined, version === null)
          if (versionBefore === version) assert.equal(keyed.headers['posts-version'], version ?? undefined)
          const lines = keyed.text.split('\n')
          assert.equal(lines.pop(), '', 'each line ends with a line feed')
          // Each post as the list serves it, in its order…
          assert.equal(`[${lines.map((line) => line.slice(line.indexOf(' ') + 1)).join(',')}]`, whole.text, shape)
          // …after the cursor the post API's own page link gives for it.
          const slugs = slugsOf(whole)
          for (const [i, line] of lines.entries()) {
            if (i === lines.length - 1) break
            const page = await get(tiers.posts.url, `/api/posts?limit=${i + 1}${shape}`)
            assert.equal(nextTarget(page, ROUTES.posts, i + 1)?.match(/after=([^&]*)/)?.[1], line.slice(0, line.indexOf(' ')), `${shape}, after ${slugs[i] ?? ''}`)
          }
        }
        const unknown = await get(tiers.posts.url, '/api/posts/keyed?fields=nope')
        assert.equal(unknown.status, 400)
      })
    })

    test('a post inserted at the head, or the cursor\'s own post deleted, neither repeats nor shifts the next page', async () => {
      await withDefaultTable(DATED, async (tiers) => {
        const whole = slugsOf(await get(tiers.posts.url, '/api/posts'))
        for (const tier of ['front', 'posts'] as const) {
          const first = await get(tiers[tier].url, `${ROUTES[tier]}?limit=3`)
          assert.deepEqual(slugsOf(first), whole.slice(0, 3))
          const next = nextTarget(first, ROUTES[tier], 3) ?? assert.fail('a next link')
          await db.exec(insert(`brand-new-${tier}`, '2025-01-01T00:00:00Z'))
          await db.exec(`DELETE FROM posts WHERE slug = '${whole[2] ?? ''}'`)
          assert.deepEqual(slugsOf(await get(tiers[tier].url, next)), whole.slice(3, 6))
          // …while the first page shows the change at once.
          assert.equal(slugsOf(await get(tiers[tier].url, `${ROUTES[tier]}?limit=3`))[0], `brand-new-${tier}`)
          await db.exec(`DELETE FROM posts WHERE slug = 'brand-new-${tier}'`)
          await db.exec(insert(whole[2] ?? '', DATED.find(([slug]) => slug === whole[2])?.[1] ?? null))
        }
      })
    })

    test('tag: only posts whose tags hold it, paged, on both tiers; none is 200 [] upstream and 404 at the front', async () => {
      const rows = DATED.map(([slug, at], i): [string, string | null, string[]] => [slug, at, i % 3 === 0 ? ['sql', 'node'] : i % 3 === 1 ? ['node'] : []])
      await withDefaultTable(rows, async (tiers) => {
        const whole = slugsOf(await get(tiers.posts.url, '/api/posts'))
        const tagged = (tag: string): string[] => whole.filter((slug) => rows.find(([s]) => s === slug)?.[2].includes(tag))
        for (const tier of ['posts', 'front'] as const) {
          assert.deepEqual(slugsOf(await get(tiers[tier].url, `${ROUTES[tier]}?tag=sql`)), tagged('sql'))
          assert.deepEqual((await walk(tiers, tier, 'limit=2&tag=node', 2)).slugs, tagged('node'))
          assert.deepEqual((await walk(tiers, tier, 'limit=1&fields=tags&tag=sql', 1)).slugs, tagged('sql'))
        }
        assert.equal((await get(tiers.posts.url, '/api/posts?tag=rust')).text, '[]')
        assert.equal(assertProblem(await get(tiers.front.url, '/api/blog?tag=rust'), 'no-posts').detail, 'No post matches tag=rust.')
        assert.equal(assertProblem(await get(tiers.front.url, '/api/blog?tag=rust,C%2B%2B&limit=5&published_after=2024-01-01'), 'no-posts').detail,
          'No post matches tag=C++,rust and published_after=2024-01-01T00:00:00Z.')
      })
    })

    test('tag on a tags column of another type; a value that is no array of strings holds no tag, and is no error', async () => {
      const { type, anyText } = fixture.tagsColumn
      await db.exec(`CREATE TABLE posts (slug VARCHAR(50) NOT NULL PRIMARY KEY, tags ${type})`)
      // a and b hold tags; the others hold none: NULL, a JSON string, an object, other values, text that is not JSON.
      const values = ['["sql","node"]', '["node"]', null, '"sql"', '{"x":"sql"}', '[1,null]', ...(anyText ? ['not json'] : [])]
      const rows = values.map((value, i) => `('${'abcdefg'[i] ?? ''}', ${value === null ? 'NULL' : `'${value}'`})`)
      await db.exec(`INSERT INTO posts (slug, tags) VALUES ${rows.join(', ')}`)
      await withTiers(await serving(), async ({ posts, front }) => {
        assert.deepEqual(slugsOf(await get(posts.url, '/api/posts?tag=sql')), ['a'])
        assert.deepEqual(slugsOf(await get(front.url, '/api/blog?tag=node&limit=1')), ['a'])
        assert.deepEqual(slugsOf(await get(front.url, '/api/blog?tag=node')), ['a', 'b'])
      })
    })

    test('a table without published_at pages by slug; without tags, a tag is a 400 at both tiers', async () => {
      await db.exec('CREATE TABLE posts (slug VARCHAR(50) NOT NULL PRIMARY KEY, title VARCHAR(50))')
      await db.exec("INSERT INTO posts (slug, title) VALUES ('b', 'B'), ('Z', 'Z'), ('a', 'A'), ('c', 'C')")
      await withTiers(await serving(), async (tiers) => {
        for (const tier of ['posts', 'front'] as const) {
          assert.deepEqual(await walk(tiers, tier, 'limit=3', 3), { slugs: ['Z', 'a', 'b', 'c'], pages: 2 })
          assert.deepEqual((await walk(tiers, tier, 'limit=1&fields=slug', 1)).slugs, ['Z', 'a', 'b', 'c'])
        }
        const direct = assertProblem(await get(tiers.posts.url, '/api/posts?tag=sql'), 'invalid-query')
        assert.match(String(direct.detail), /\btag\b/)
        const relayed = assertProblem(await get(tiers.front.url, '/api/blog?tag=sql'), 'invalid-query')
        assert.equal(relayed.detail, direct.detail)
        // A cursor of a dated list cannot say where to resume here.
        const dated = encodeCursor({ slug: 'a', publishedAt: '2024-01-01T00:00:00.000Z' })
        for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
          assert.match(String(assertProblem(await get(base, `${route}?limit=2&after=${dated}`), 'invalid-query').detail), /\bafter\b/)
        }
        // Sorts by the columns it has; one it lacks is the upstream's 400, relayed with its detail.
        for (const tier of ['posts', 'front'] as const) {
          assert.deepEqual(await walk(tiers, tier, 'limit=3&sort=title', 3), { slugs: ['a', 'b', 'c', 'Z'], pages: 2 })
          assert.deepEqual(await walk(tiers, tier, 'limit=1&sort=-slug', 1), { slugs: ['c', 'b', 'a', 'Z'], pages: 4 })
        }
        for (const sort of ['-published_at', 'updated_at']) {
          const missing = assertProblem(await get(tiers.posts.url, `/api/posts?sort=${sort}`), 'invalid-query')
          assert.equal(missing.detail, `The sort parameter names ${sort.replace('-', '')}, which is not a column of the posts table.`)
          assert.equal(assertProblem(await get(tiers.front.url, `/api/blog?limit=2&sort=${sort}`), 'invalid-query').detail, missing.detail)
        }
      })
    })

    test('detail answers link to their neighbours in the list order, each tier on its own route, and a write moves them at once', async () => {
      await withDefaultTable(DATED, async (tiers) => {
        const order = slugsOf(await get(tiers.posts.url, '/api/posts?fields=slug'))
        const frontSlug = (slug: string | undefined): string | undefined => slug !== undefined && /^[a-z0-9]+(?:-[a-z0-9]+)*$/.test(slug) ? slug : undefined
        const expectedLink = (route: string, prev: string | undefined, next: string | undefined): string | undefined => {
          const links = [...(prev === undefined ? [] : [`<${route}${prev}>; rel="prev"`]), ...(next === undefined ? [] : [`<${route}${next}>; rel="next"`])]
          return links.length === 0 ? undefined : links.join(', ')
        }
        for (const [i, slug] of order.entries()) {
          assert.equal((await get(tiers.posts.url, `/api/post/${slug}`)).headers.link, expectedLink('/api/post/', order[i - 1], order[i + 1]), slug)
          // The front links no slug it would refuse (Zed).
          if (frontSlug(slug) !== undefined) {
            assert.equal((await get(tiers.front.url, `/api/blog/${slug}`)).headers.link, expectedLink('/api/blog/', frontSlug(order[i - 1]), frontSlug(order[i + 1])), slug)
          }
        }
        const before = { posts: await get(tiers.posts.url, '/api/post/newest'), front: await get(tiers.front.url, '/api/blog/newest') }
        await db.exec(insert('between', '2024-04-01T00:00:00Z'))
        for (const [tier, path, route] of [['posts', '/api/post/newest', '/api/post/'], ['front', '/api/blog/newest', '/api/blog/']] as const) {
          const after = await get(tiers[tier].url, path, { 'if-none-match': String(before[tier].headers.etag) })
          assert.equal(after.status, 200, `${path}: the same body, another neighbour, never a 304`)
          assert.equal(after.text, before[tier].text)
          assert.equal(after.headers.link, `<${route}between>; rel="next"`)
        }
        assert.equal((await get(tiers.posts.url, '/api/post/between')).headers.link, '</api/post/newest>; rel="prev", </api/post/Zed>; rel="next"')
        assert.equal((await get(tiers.front.url, '/api/blog/between')).headers.link, '</api/blog/newest>; rel="prev"')
      })
    })

    declareListParameterTests(suite)
  })
}
