// Each post's neighbours, read by keyset as a store without versions reads them, against the
// reference model (list-query-model.ts): on random tables, the posts either side of each one in
// the default list order. On the stores and tables of list-query-model.test.ts.
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import { openTestStore, type TestDatabase } from '../helpers/databases.js'
import { compareBy, MODEL_VARIANTS, rows, RUNS, useModelTable } from './list-query-model.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

for (const { name, server, variant } of MODEL_VARIANTS) {
  describeOrSkip(`${name}: neighbours against the model`, { skip: server.skip }, () => {
    const table = useModelTable(server, variant)
    const { held, load } = table
    let db: TestDatabase
    before(() => { db = table.db() })

    test(`${RUNS} random tables: each post's neighbours, read by keyset (a store without versions), are its neighbours in the list order`, { timeout: 600_000 }, async () => {
      const store = await openTestStore(db.location)
      await store.checkSchema()
      try {
        await fc.assert(fc.asyncProperty(rows.map(held), async (all) => {
          await load(all)
          const order = [...all].sort(compareBy(null)).map((r) => r.slug)
          for (const [i, slug] of order.entries()) {
            const [prev, next] = [order[i - 1], order[i + 1]]
            assert.deepEqual(await store.readNeighbours?.(slug), { ...(prev === undefined ? {} : { prev }), ...(next === undefined ? {} : { next }) }, slug)
          }
          assert.equal(await store.readNeighbours?.('not-a-row'), undefined)
        }), { numRuns: RUNS, includeErrorInReport: true })
      } finally {
        await store.close()
      }
    })
  })
}
