// Walks through a list's pages with random writes between them, against the reference model
// (list-query-model.ts): every post that exists throughout with the same sort key (and, in a
// sorted search, matches throughout) is served exactly once, in list order, at both tiers. On
// the stores and tables of list-query-model.test.ts.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import { get } from '../helpers/http.js'
import type { TestDatabase } from '../helpers/databases.js'
import type { Tiers } from '../helpers/tiers.js'
import { compareBy, MODEL_VARIANTS, rows, RUNS, search, sortValue, SORTS, sqlText, useModelTable, write, type Row, type Write } from './list-query-model.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

for (const { name, server, variant } of MODEL_VARIANTS) {
  describeOrSkip(`${name}: walks under writes against the model`, { skip: server.skip }, () => {
    const table = useModelTable(server, variant)
    const { held, insert, load } = table
    let db: TestDatabase
    let tiers: Tiers
    before(() => {
      db = table.db()
      tiers = table.tiers()
    })

    /** A write between two pages: a row's columns changed, a row added, or one deleted. */
    async function apply (all: Row[], w: Write): Promise<void> {
      const [changed] = held([{ slug: w.slug, ...w.columns }])
      if (changed === undefined) return
      const at = all.findIndex((r) => r.slug === w.slug)
      if (w.kind === 'delete' && at !== -1) {
        all.splice(at, 1)
        await db.exec(`DELETE FROM posts WHERE slug = ${sqlText(w.slug)}`)
      } else if (w.kind !== 'delete' && at === -1) {
        all.push(changed)
        await insert([changed])
      } else if (w.kind !== 'delete') {
        all[at] = changed
        await db.exec(`DELETE FROM posts WHERE slug = ${sqlText(w.slug)}`)
        await insert([changed])
      }
    }

    test(`${RUNS} walks with writes between the pages: each post whose sort key (and match) stays the same is served once, in list order`, { timeout: 600_000 }, async (t) => {
      let stableServed = 0
      let searchedWalks = 0
      const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
      await fc.assert(fc.asyncProperty(rows.map(held), fc.option(fc.constantFrom(...SORTS), { freq: 3 }), fc.option(search, { freq: 2 }), fc.integer({ min: 1, max: 4 }), fc.constantFrom('posts', 'front'), fc.array(fc.array(write, { maxLength: 3 }), { maxLength: 8 }),
        async (initial, s, found, limit, tier, writes) => {
          // A search in a sort; without one its order is its relevance, which moves with any write.
          const searched = s === null ? null : found
          if (searched !== null) searchedWalks++
          const matches = (r: Row): boolean => searched === null || searched.matches(r.words)
          const all = [...initial]
          await load(all)
          /** The posts matching when the walk began, until their value changes, they stop matching, or are deleted. */
          const keys = new Map(initial.filter(matches).map((r) => [r.slug, sortValue(r, s)]))
          const [base, route] = tier === 'posts' ? [tiers.posts.url, '/api/posts'] : [tiers.front.url, '/api/blog']
          const served: string[] = []
          const search = `${s === null ? '' : `&sort=${s}`}${searched === null ? '' : `&q=${encodeURIComponent(searched.text)}`}`
          let target: string | undefined = `${route}?limit=${limit}${search}`
          for (let page = 0; target !== undefined; page++) {
            assert.ok(page <= 40, 'the walk ends')
            const response = await get(base, target)
            if (response.status === 404 && route === '/api/blog') break
            assert.equal(response.status, 200, `${target}: ${response.text}`)
            served.push(...(response.json() as Array<{ slug: string }>).map((p) => p.slug))
            target = /^<([^<>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1]
            for (const w of writes[page] ?? []) {
              const before = all.find((r) => r.slug === w.slug)
              await apply(all, w)
              const now = all.find((r) => r.slug === w.slug)
              if (before !== undefined && (now === undefined || sortValue(now, s) !== sortValue(before, s) || !matches(now))) keys.delete(w.slug)
            }
          }
          const stable = initial.filter((r) => keys.has(r.slug)).sort(compareBy(s)).map((r) => r.slug)
          const stableServedInOrder = served.filter((slug) => keys.has(slug))
          assert.deepEqual(stableServedInOrder, stable, `${route}?limit=${limit}${search}: ${served.join(' ')}`)
          stableServed += stable.length
        }), { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
      t.diagnostic(`${name}: ${RUNS} walks (${searchedWalks} of a search with a sort), ${stableServed} stable posts served`)
    })
  })
}
