// A `posts` view, run against every store: served like a table through both tiers, and `migrate`
// on it says so in one line and installs change tracking on the tables it reads where the store
// needs and allows it (SQLite: the counter's triggers), or says why nothing is needed or possible;
// a write to any of those tables then shows in the next answer of both tiers.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { describeMigration } from '../../src/cli/store-commands.js'
import type { ViewTracking } from '../../src/store/store.js'
import { openTestStore, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { createClock, startPublishingTiers } from './publishing-fixture.js'
import { NOW } from './publishing-suite.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const TRACKING: Record<string, { tracking: ViewTracking, added: string[], line: RegExp }> = {
  sqlite: {
    tracking: { kind: 'installed', tables: ['articles', 'authors'] },
    added: ['table blog_read_api_changes', ...['articles', 'authors'].flatMap((table) => ['deleted', 'inserted', 'updated'].map((event) => `trigger blog_read_api_${table}_${event}`))],
    line: /^posts in the database is a view: change tracking is on the tables it reads \(articles, authors\): added table blog_read_api_changes, trigger blog_read_api_articles_deleted, .* \(run migrate again after changing the view\); it is served like a table/
  },
  postgres: { tracking: { kind: 'built-in' }, added: [], line: /^posts in the database is a view: nothing was created or changed, and change tracking needs nothing: the store sees every commit to the tables it reads; it is served like a table/ },
  mysql: { tracking: { kind: 'none' }, added: [], line: /^posts in the database is a view: nothing was created or changed: this store has no change tracking to install, every answer is read afresh; it is served like a table/ }
}

export function describeViews (name: string, server: TestServer): void {
  describeOrSkip(`a posts view on ${name}`, { skip: server.skip }, () => {
    test('migrate says it is a view in one line and tracks the tables it reads where the store allows; a write to either shows in the next answer of both tiers', async () => {
      const db = await server.create()
      try {
        const { dialect } = db.location
        await db.exec(`CREATE TABLE articles (slug VARCHAR(100) NOT NULL PRIMARY KEY, title VARCHAR(100), author_id INTEGER, published_at ${dialect === 'postgres' ? 'timestamptz' : dialect === 'mysql' ? 'DATETIME(3)' : 'TEXT'})`)
        await db.exec('CREATE TABLE authors (id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(100))')
        await db.exec("INSERT INTO articles (slug, title, author_id, published_at) VALUES ('old', 'Old', 1, '2020-01-01 00:00:00'), ('new', 'New', 2, '2021-01-01 00:00:00')")
        await db.exec("INSERT INTO authors (id, name) VALUES (1, 'Ada'), (2, 'Grace')")
        await db.exec('CREATE VIEW posts AS SELECT a.slug, a.title, w.name AS author, a.published_at FROM articles a LEFT JOIN authors w ON w.id = a.author_id')
        const expected = TRACKING[dialect]!
        const writer = await openTestStore(db.location, { writable: true })
        try {
          const outcome = await writer.migrate()
          assert.deepEqual(outcome, { posts: 'view', tracking: expected.tracking, added: expected.added })
          const line = describeMigration(outcome, 'the database')
          assert.match(line, expected.line)
          assert.doesNotMatch(line, /\n/)
          assert.deepEqual(await writer.migrate(), { posts: 'view', tracking: expected.tracking, added: [] }, 'idempotent')
        } finally {
          await writer.close()
        }

        // Two post API processes name each state of the view alike (SQLite's counter), and both see a write to either table.
        const other = await openTestStore(db.location)
        const tiers = await startPublishingTiers(db, { publishedOnly: true, clock: createClock(NOW) })
        try {
          await other.checkSchema()
          const tokens = async (): Promise<Array<string | undefined>> => [await tiers.store.readChangeToken(), await other.readChangeToken()]
          const authors = async (base: string, path: string): Promise<unknown> => (((await get(base, path)).json()) as Array<{ slug: string, author: string }>).map((post) => [post.slug, post.author])
          const routes = [[tiers.front.url, '/api/blog'], [tiers.posts.url, '/api/posts']] as const
          for (const [base, path] of routes) assert.deepEqual(await authors(base, path), [['new', 'Grace'], ['old', 'Ada']])
          const before = await tokens()
          if (dialect === 'sqlite') assert.match(String(before[0]), /^c-?\d+$/)
          if (dialect !== 'postgres') assert.equal(before[0], before[1], 'one token for both processes')
          await db.exec("UPDATE authors SET name = 'Grace Hopper' WHERE id = 2")
          for (const [base, path] of routes) assert.deepEqual(await authors(base, path), [['new', 'Grace Hopper'], ['old', 'Ada']], `${base}${path}`)
          const afterAuthors = await tokens()
          if (dialect !== 'mysql') assert.notEqual(afterAuthors[0], before[0])
          if (dialect !== 'postgres') assert.equal(afterAuthors[0], afterAuthors[1])
          await db.exec("UPDATE articles SET title = 'Older' WHERE slug = 'old'")
          for (const [base] of routes) {
            const detail = base === tiers.front.url ? '/api/blog/old' : '/api/post/old'
            assert.equal(((await get(base, detail)).json() as { title: string }).title, 'Older', `${base}${detail}`)
          }
        } finally {
          await other.close()
          await tiers.close()
        }
      } finally {
        await db.drop()
      }
    })
  })
}
