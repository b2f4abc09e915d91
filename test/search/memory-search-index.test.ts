// The index the post API keeps itself: it ranks as the SQLite store's own FTS5 index does, and
// changes applied one by one leave it as a rebuild from the final rows would.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import fc from 'fast-check'
import { DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'
import { openMemorySearchIndex } from '../../src/search/memory-search-index.js'
import { parseSearchQuery } from '../../src/contract/search-query.js'
import { sqliteTarget, type OpenTarget, type PostText } from './search-targets.js'

const WORDS = ['apple', 'brick', 'cloud', 'running', 'runs', 'connection', 'connected', 'the', 'ember']
const text = (max: number) => fc.array(fc.constantFrom(...WORDS), { maxLength: max }).map((words) => words.join(' '))
const slug = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h')
const row = fc.record({ slug, title: text(4), summary: fc.option(text(6)), content: text(20) })
  .map(({ summary, ...rest }): PostText => ({ ...rest, summary }))
const queryText = fc.array(fc.oneof(fc.constantFrom(...WORDS), fc.constantFrom(...WORDS).map((w) => `-${w}`), fc.constant('OR')), { minLength: 1, maxLength: 4 })
  .map((parts) => parts.join(' '))
  .filter((q) => { try { parseSearchQuery(q); return true } catch { return false } })

/** The last row of each slug, as a store holding them would. */
const distinct = (rows: PostText[]): PostText[] => [...new Map(rows.map((r) => [r.slug, r])).values()]

let store: OpenTarget
before(async () => { store = await sqliteTarget.open(DEFAULT_SEARCH_SETTINGS) })
after(async () => { await store?.close() })

test('the same hits with the same ranks as the SQLite store\'s own index, for the same rows', async () => {
  const index = openMemorySearchIndex(DEFAULT_SEARCH_SETTINGS)
  try {
    await fc.assert(fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 12 }), fc.array(queryText, { minLength: 5, maxLength: 5 }), async (rows, queries) => {
      const posts = distinct(rows)
      await store.replacePosts(posts)
      index.rebuild(posts)
      for (const q of queries) assert.deepEqual(index.search(parseSearchQuery(q)), await store.search(parseSearchQuery(q)), q)
    }), { numRuns: 60 })
  } finally {
    index.close()
  }
})

const change = fc.oneof(row.map((upsert) => ({ upsert })), slug.map((remove) => ({ remove })))

test('changes applied one batch at a time leave the index as a rebuild from the final rows', () => {
  fc.assert(fc.property(fc.array(row, { maxLength: 8 }), fc.array(fc.array(change, { maxLength: 4 }), { maxLength: 6 }), fc.array(queryText, { minLength: 4, maxLength: 4 }), (initial, batches, queries) => {
    const incremental = openMemorySearchIndex(DEFAULT_SEARCH_SETTINGS)
    const rebuilt = openMemorySearchIndex(DEFAULT_SEARCH_SETTINGS)
    try {
      const rows = new Map(distinct(initial).map((r) => [r.slug, r]))
      incremental.rebuild(rows.values())
      for (const batch of batches) {
        const upserted = distinct(batch.flatMap((c) => 'upsert' in c ? [c.upsert] : []))
        const deleted = batch.flatMap((c) => 'remove' in c ? [c.remove] : []).filter((s) => !upserted.some((r) => r.slug === s))
        incremental.apply({ upserted, deleted })
        for (const s of deleted) rows.delete(s)
        for (const r of upserted) rows.set(r.slug, r)
      }
      rebuilt.rebuild(rows.values())
      assert.equal(incremental.size, rows.size)
      // Ranks too, exactly: bm25's totals must follow deletes.
      for (const q of queries) assert.deepEqual(incremental.search(parseSearchQuery(q)), rebuilt.search(parseSearchQuery(q)), q)
    } finally {
      incremental.close()
      rebuilt.close()
    }
  }), { numRuns: 300 })
})

test('an upsert replaces the row of its slug, a delete of an unknown slug changes nothing, a rebuild starts afresh', () => {
  const index = openMemorySearchIndex(DEFAULT_SEARCH_SETTINGS)
  try {
    const find = (q: string): string[] => index.search(parseSearchQuery(q)).map((hit) => hit.slug)
    index.rebuild([{ slug: 'a', title: 'apple', summary: null, content: '' }, { slug: 'b', title: 'brick', summary: null, content: 'apple' }])
    assert.deepEqual(find('apple'), ['a', 'b'])
    index.apply({ upserted: [{ slug: 'a', title: 'cloud', summary: null, content: '' }], deleted: ['zzz'] })
    assert.deepEqual(find('apple'), ['b'])
    assert.deepEqual(find('cloud'), ['a'])
    assert.equal(index.size, 2)
    index.rebuild([{ slug: 'c', title: 'cloud', summary: 'x', content: 'y' }])
    assert.deepEqual(find('cloud'), ['c'])
    assert.equal(index.size, 1)
  } finally {
    index.close()
  }
})
