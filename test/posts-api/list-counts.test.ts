// `count=exact`: X-Total-Count at both tiers, counted once per filter and posts version (not per
// request, page or limit), counted again after a change, and covered by the ETag.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { ListFilter } from '../../src/contract/list-filter.js'
import { createListCounts } from '../../src/posts-api/list-counts.js'
import type { PostStore } from '../../src/store/store.js'
import { createSeededSqlite, openTestStore, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'

test('one count per filter and token, shared by every page; a new token, no token or a failure counts again', async () => {
  const asked: ListFilter[] = []
  let fail = false
  const counts = createListCounts(async (filter) => {
    asked.push(filter)
    if (fail) throw new Error('store down')
    return 7
  })
  assert.equal(await counts.count({ tag: ['a'] }, 't1'), 7)
  assert.equal(await counts.count({ tag: ['a'], limit: 3, count: 'exact' } as ListFilter, 't1'), 7)
  await Promise.all([counts.count({ tag: ['a'] }, 't1'), counts.count({ tag: ['a'] }, 't1')])
  assert.deepEqual(asked, [{ tag: ['a'] }], 'the filter only, once')
  await counts.count({ tag: ['b'] }, 't1')
  await counts.count({ tag: ['a'] }, 't2')
  await counts.count({ tag: ['a'] }, undefined)
  await counts.count({ tag: ['a'] }, undefined)
  assert.equal(asked.length, 5)
  fail = true
  await assert.rejects(counts.count({ tag: ['c'] }, 't2'))
  fail = false
  assert.equal(await counts.count({ tag: ['c'] }, 't2'), 7)
  assert.equal(asked.length, 7)
})

let db: TestDatabase
let tiers: Tiers
let counted = 0

before(async () => {
  db = await createSeededSqlite()
  const store = await openTestStore(db.location)
  await store.checkSchema()
  // The real store, its counts counted.
  const counting = new Proxy(store, {
    get (target, property) {
      if (property === 'countPosts') return async (filter: ListFilter) => { counted++; return await target.countPosts(filter) }
      const value = Reflect.get(target, property, target) as unknown
      return typeof value === 'function' ? value.bind(target) : value
    }
  }) as PostStore
  tiers = await startTiers(counting)
})
after(async () => {
  await tiers?.close()
  await db?.drop()
})

test('X-Total-Count at both tiers, whatever the page; once per filter and version; a change counts again; the ETag covers it', async () => {
  const all = (await get(tiers.posts.url, '/api/posts')).json() as Array<{ slug: string }>
  assert.ok(all.length >= 3, 'the sample posts')
  assert.equal((await get(tiers.front.url, '/api/blog?limit=1')).headers['x-total-count'], undefined)
  const before = counted
  for (const limit of [1, 2, 1]) {
    for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
      const page = await get(base, `${route}?limit=${limit}&count=exact`)
      assert.equal(page.status, 200)
      assert.equal(page.headers['x-total-count'], String(all.length), `${route} limit=${limit}`)
      assert.match(String(page.headers['access-control-expose-headers'] ?? 'X-Total-Count'), /X-Total-Count/)
    }
  }
  assert.equal((await get(tiers.front.url, '/api/blog?count=exact')).headers['x-total-count'], String(all.length))
  assert.equal(counted - before, 1, 'one count for every page and limit of one filter and version')
  const plainEtag = (await get(tiers.posts.url, '/api/posts?limit=1')).headers.etag
  const countedPage = await get(tiers.posts.url, '/api/posts?limit=1&count=exact')
  assert.notEqual(countedPage.headers.etag, plainEtag)

  // A post added at the end of the list: the first page's bytes stay, its count and ETag move.
  await db.exec("INSERT INTO posts (slug, title, content, tags, published_at) VALUES ('zz-undated', 'Z', '', '[]', NULL)")
  for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
    const page = await get(base, `${route}?limit=1&count=exact`, { 'if-none-match': String(countedPage.headers.etag) })
    assert.equal(page.status, 200, route)
    assert.equal(page.headers['x-total-count'], String(all.length + 1), route)
  }
  assert.equal(counted - before, 2, 'counted again once after the change')
  const tagged = await get(tiers.front.url, '/api/blog?count=exact&tag=nosuchtag')
  assert.equal(tagged.status, 404)
})
