// The post API's lists over a real SQLite file: a list above the buffer limit (8 MiB) streams
// byte for byte with or without a query, a page is built whole whatever its size, a page's ETag
// covers its next link, and bodies are kept per change token and query, bounded in number.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import Database from 'better-sqlite3'
import { LIST_BUFFER_LIMIT } from '../../src/contract/body-limits.js'
import type { ListQuery } from '../../src/contract/list-query.js'
import { createPostBodies } from '../../src/posts-api/post-bodies.js'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'

interface Row {
  id: number
  slug: string
  title: string
  summary: string | null
  content: string
  author: string | null
  tags: string[]
  published_at: string | null
  updated_at: string | null
}

/** Creates the default table and fills it with `rows`, in one transaction of an editor's connection. */
async function defaultTable (db: TestDatabase, rows: readonly Row[]): Promise<void> {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate()
  await writer.close()
  const editor = new Database(db.name)
  try {
    const insert = editor.prepare('INSERT INTO posts VALUES (@id, @slug, @title, @summary, @content, @author, @tags, @published_at, @updated_at)')
    editor.transaction(() => { for (const row of rows) insert.run({ ...row, tags: JSON.stringify(row.tags) }) })()
  } finally {
    editor.close()
  }
}

const row = (id: number, publishedAt: string | null, content = `# Post ${id}`): Row => ({
  id, slug: `post-${String(id).padStart(5, '0')}`, title: `Post ${id}`, summary: null, content, author: 'Ada', tags: id % 2 === 0 ? ['even'] : ['odd'], published_at: publishedAt, updated_at: null
})

/** The list order (newest first, undated last, ties by slug), computed here independently of the store. */
function listOrder (rows: readonly Row[]): Row[] {
  return [...rows].sort((a, b) => {
    if (a.published_at !== b.published_at) {
      if (a.published_at === null) return 1
      if (b.published_at === null) return -1
      return a.published_at < b.published_at ? 1 : -1
    }
    return Buffer.compare(Buffer.from(a.slug), Buffer.from(b.slug))
  })
}

const only = (rows: readonly Row[], fields: ReadonlyArray<keyof Row>): unknown[] =>
  rows.map((r) => Object.fromEntries(Object.entries(r).filter(([name]) => fields.includes(name as keyof Row))))

describe('lists above the buffer limit', () => {
  let db: TestDatabase
  let tiers: Tiers
  let ordered: Row[]

  before(async () => {
    db = await sqliteServer.create()
    // 1,010 posts of about 9.5 KB: 9.6 MB in all, above the 8 MiB buffer limit; ten undated.
    const rows = Array.from({ length: 1010 }, (_, i) => row(i + 1, i < 1000 ? new Date(Date.UTC(2024, 0, 1) + (i % 700) * 3_600_000).toISOString() : null,
      `# Post ${i + 1}\n\n${'lorem ipsum '.repeat(790)}`))
    await defaultTable(db, rows)
    ordered = listOrder(rows)
    const store = await openTestStore(db.location)
    await store.checkSchema()
    tiers = await startTiers(store)
  })
  after(async () => {
    await tiers?.close()
    await db?.drop()
  })

  test('the whole list streams byte for byte through both tiers, tagged from the change token, 304 on revalidation', async () => {
    const expected = JSON.stringify(ordered)
    assert.ok(expected.length > LIST_BUFFER_LIMIT, 'the list is above the buffer limit')
    const direct = await get(tiers.posts.url, '/api/posts')
    assert.equal(direct.status, 200)
    assert.equal(direct.headers['content-length'], undefined, 'streamed, not built whole')
    assert.equal(direct.headers['transfer-encoding'], 'chunked')
    assert.match(String(direct.headers.etag), /^"L-/)
    assert.equal(direct.text, expected)
    assert.equal((await get(tiers.posts.url, '/api/posts', { 'if-none-match': String(direct.headers.etag) })).status, 304)
    const relayed = await get(tiers.front.url, '/api/blog')
    assert.equal(relayed.status, 200)
    assert.equal(relayed.text, expected)
  })

  test('a list query without a limit streams too, with a validator of its own', async () => {
    const direct = await get(tiers.posts.url, '/api/posts?fields=content')
    assert.equal(direct.headers['content-length'], undefined)
    assert.equal(direct.text, JSON.stringify(only(ordered, ['slug', 'content'])))
    const whole = await get(tiers.posts.url, '/api/posts', { 'if-none-match': String(direct.headers.etag) })
    assert.equal(whole.status, 200, 'another query, another validator')
    assert.equal((await get(tiers.front.url, '/api/blog?fields=content')).text, direct.text)
    // Small enough to build whole once filtered.
    const odd = await get(tiers.posts.url, '/api/posts?tag=odd&fields=title')
    assert.ok(odd.headers['content-length'] !== undefined)
    assert.equal(odd.text, JSON.stringify(only(ordered.filter((r) => r.tags.includes('odd')), ['slug', 'title'])))
  })

  test('a page of 1,000 large posts is built whole (9.5 MB with its length) and relayed with the front\'s own link', async () => {
    const direct = await get(tiers.posts.url, '/api/posts?limit=1000')
    assert.ok(Number(direct.headers['content-length']) > LIST_BUFFER_LIMIT)
    assert.equal(direct.text, JSON.stringify(ordered.slice(0, 1000)))
    assert.match(String(direct.headers.link), /^<\/api\/posts\?limit=1000&after=[\w-]+>; rel="next"$/)
    const relayed = await get(tiers.front.url, '/api/blog?limit=1000')
    assert.equal(relayed.text, direct.text)
    assert.equal(relayed.headers.link, String(direct.headers.link).replace('/api/posts?', '/api/blog?'))
    const last = await get(tiers.front.url, /^<([^>]+)>/.exec(String(relayed.headers.link))?.[1] ?? assert.fail('a link'))
    assert.equal(last.text, JSON.stringify(ordered.slice(1000)))
    assert.equal(last.headers.link, undefined)
  })
})

describe('pages and their bodies', () => {
  let db: TestDatabase
  let store: PostStore

  before(async () => {
    db = await sqliteServer.create()
    await defaultTable(db, [row(1, '2024-01-02T00:00:00.000Z'), row(2, '2024-01-03T00:00:00.000Z')])
    store = await openTestStore(db.location)
    await store.checkSchema()
  })
  after(async () => {
    await store?.close()
    await db?.drop()
  })

  test('a page\'s ETag covers its next link: a post added after the last leaves the body, not the validator', async () => {
    const serving = await openTestStore(db.location)
    await serving.checkSchema()
    const tiers = await startTiers(serving)
    try {
      for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
        const before = await get(base, `${route}?limit=2`)
        assert.equal(before.headers.link, undefined)
        await db.exec(`INSERT INTO posts (id, slug, title, content, published_at) VALUES (${route.length}, 'older-${route.length}', 'Older', '', '2023-01-01T00:00:00.000Z')`)
        const after = await get(base, `${route}?limit=2`, { 'if-none-match': String(before.headers.etag) })
        assert.equal(after.status, 200, `${route}: a new validator, not 304`)
        assert.equal(after.text, before.text)
        assert.match(String(after.headers.link), new RegExp(`^<${route.replace(/\//g, '\\/')}\\?limit=2&after=`))
        await db.exec(`DELETE FROM posts WHERE id = ${route.length}`)
      }
    } finally {
      await tiers.close()
    }
  })

  test('a body is built once per change token and query; a flood of distinct queries keeps at most 1,000', async () => {
    const reads: string[] = []
    const counted = {
      readPage: async (query: ListQuery & { limit: number }) => { reads.push(`page ${JSON.stringify(query)}`); return await store.readPage(query) },
      streamPosts: (query?: ListQuery) => { reads.push(`list ${JSON.stringify(query)}`); return store.streamPosts(query) }
    }
    // The store's own methods (private fields) on the store itself, but the two reads counted.
    const counting = new Proxy(store, {
      get: (target, name) => {
        if (name === 'readPage' || name === 'streamPosts') return counted[name]
        const value: unknown = Reflect.get(target, name, target)
        return typeof value === 'function' ? value.bind(target) : value
      }
    })
    const bodies = createPostBodies(counting)
    const page = await bodies.list({ limit: 1 })
    assert.equal((await bodies.list({ limit: 1 })).body, page.body)
    await bodies.list({ limit: 1, tag: ['odd'] })
    await bodies.list({ limit: 2 })
    await bodies.list()
    await bodies.list()
    assert.equal(reads.length, 4, reads.join('\n'))
    for (let i = 0; i < 3000; i++) await bodies.list({ limit: (i % 1000) + 1, tag: [`tag-${i}`] })
    assert.ok(bodies.cached <= 1000, `${bodies.cached} bodies kept after 3,000 distinct queries`)
    assert.equal(reads.length, 3004)
  })
})
