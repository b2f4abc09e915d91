// The list queries against a reference model: random rows, random combinations of the filters
// (tag sets with free-form tags, date windows, a search `q` of the posts' words) and sorts with
// random pages; the answer's membership and order (a search without a sort is in its relevance
// order: there, the membership, and every walk in the whole list's order; with a sort, the
// model's order of its matches), its count, a cursor walk through both tiers, and the tag counts
// equal what the model computes in JavaScript; a cursor used in another order (another sort, or
// with `q` added or removed where that changes the order) is refused. Neighbours by keyset and
// walks with writes between the pages have files of their own (neighbours-model.test.ts,
// walks-model.test.ts), on the same stores and tables.
// SQLite always; PostgreSQL (a jsonb and a text[] `tags`) and MySQL when their test servers are
// set (mandatory in CI), as the store suites run; searched with the store's index
// (`migrate --search`) on some, the post API's in-memory index on the others.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import { DEFAULT_SORT, sortOrder } from '../../src/contract/list-sort.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import type { Tiers } from '../helpers/tiers.js'
import { expected, MODEL_VARIANTS, query, rows, RUNS, searchOf, SORTS, TAGS, useModelTable, WORDS, type Query } from './list-query-model.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

for (const { name, server, variant } of MODEL_VARIANTS) {
  describeOrSkip(`${name}: list queries against the model`, { skip: server.skip }, () => {
    const table = useModelTable(server, variant)
    const { held, load } = table
    let tiers: Tiers
    before(() => { tiers = table.tiers() })

    /** Every page of `search` at `route`, following next links; the front's empty list is a 404 no-posts. */
    async function walk (base: string, route: string, search: string, limit: number): Promise<string[]> {
      const slugs: string[] = []
      let target: string | undefined = `${route}?limit=${limit}${search === '' ? '' : `&${search}`}`
      for (let pages = 0; target !== undefined; pages++) {
        assert.ok(pages <= 20, 'the walk ends')
        const response = await get(base, target)
        if (response.status === 404 && route === '/api/blog' && slugs.length === 0) {
          assert.match(String(assertProblem(response, 'no-posts').detail), search === '' ? /^There are no posts yet\.$/ : /^No post matches /)
          return slugs
        }
        assert.equal(response.status, 200, `${target}: ${response.text}`)
        const page = (response.json() as Array<{ slug: string }>).map((p) => p.slug)
        if (page.length === 0 && slugs.length === 0 && route === '/api/posts') return slugs
        assert.ok(page.length <= limit && page.length > 0, `${target}: ${page.length} posts`)
        slugs.push(...page)
        target = /^<([^<>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1]
      }
      return slugs
    }

    /**
     * A next link's cursor in another order (another sort; `q` removed, or added, where that
     * changes the order: a search without a sort is in its relevance order): a 400 naming
     * `after` at both tiers, never a page from the wrong place.
     */
    async function assertOtherOrderRefused (search: string, q: Query): Promise<void> {
      const first = await get(tiers.posts.url, `/api/posts?limit=${q.limit}${search === '' ? '' : `&${search}`}`)
      const cursor = /[?&]after=([^&>]+)/.exec(String(first.headers.link ?? ''))?.[1]
      if (cursor === undefined) return
      const order = (o: Query): string => o.sort === null ? (o.q === null ? DEFAULT_SORT : 'q') : o.sort
      const otherSort = SORTS.find((s) => sortOrder(s).column !== sortOrder(q.sort ?? DEFAULT_SORT).column) ?? 'slug'
      const toggled: Query = { ...q, q: q.q === null ? { text: WORDS[0], matches: () => true } : null }
      const others = [{ ...q, sort: otherSort }, toggled].filter((o) => order(o) !== order(q))
      for (const other of others) {
        for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
          const refused = await get(base, `${route}?limit=${q.limit}&after=${cursor}&${searchOf(other)}`)
          assert.match(String(assertProblem(refused, 'invalid-query').detail), /\bafter\b/, `${route}?${searchOf(other)} after a cursor of ?${search}`)
        }
      }
    }

    test(`${RUNS} random tables and queries: the list, its pages and their walk through both tiers equal the model`, { timeout: 600_000 }, async (t) => {
      let nonEmpty = 0
      let asked = 0
      let sortedSearches = 0
      const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
      await fc.assert(fc.asyncProperty(rows.map(held), fc.array(query, { minLength: 1, maxLength: 3 }), async (all, queries) => {
        await load(all)
        // Every tag with its number of posts, at both tiers, exactly fresh.
        const tagCounts = TAGS.map((tag) => ({ tag, count: all.filter((r) => r.tags?.includes(tag) === true).length })).filter((t) => t.count > 0)
          .sort((a, b) => b.count - a.count || Buffer.compare(Buffer.from(a.tag), Buffer.from(b.tag)))
        assert.deepEqual((await get(tiers.posts.url, '/api/posts/tags')).json(), tagCounts)
        assert.deepEqual((await get(tiers.front.url, '/api/tags')).json(), tagCounts)
        for (const q of queries) {
          const want = expected(all, q)
          asked++
          if (want.length > 0) nonEmpty++
          if (q.q !== null && q.sort !== null) sortedSearches++
          const search = searchOf(q)
          const whole = await get(tiers.posts.url, `/api/posts${search === '' ? '' : `?${search}`}`)
          assert.equal(whole.status, 200, whole.text)
          assert.equal(whole.headers['x-total-count'], undefined)
          // The count: every post the filters keep, whatever the page, at both tiers.
          const counted = `limit=${q.limit}&count=exact${search === '' ? '' : `&${search}`}`
          assert.equal((await get(tiers.posts.url, `/api/posts?${counted}`)).headers['x-total-count'], String(want.length), counted)
          if (want.length > 0) assert.equal((await get(tiers.front.url, `/api/blog?${counted}`)).headers['x-total-count'], String(want.length), counted)
          const listed = (whole.json() as Array<{ slug: string }>).map((p) => p.slug)
          // A search without a sort is in its relevance order, which the model does not compute: its members, then every walk in its order.
          if (q.q === null || q.sort !== null) assert.deepEqual(listed, want, `/api/posts?${search}`)
          else assert.deepEqual([...listed].sort(), [...want].sort(), `/api/posts?${search}`)
          assert.deepEqual(await walk(tiers.posts.url, '/api/posts', search, q.limit), listed, `walk /api/posts?${search}`)
          assert.deepEqual(await walk(tiers.front.url, '/api/blog', search, q.limit), listed, `walk /api/blog?${search}`)
          await assertOtherOrderRefused(search, q)
        }
      }), { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
      t.diagnostic(`${name}: ${RUNS} tables, ${asked} queries, ${nonEmpty} with a non-empty answer, ${sortedSearches} searches with a sort`)
    })
  })
}
