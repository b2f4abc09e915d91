// SQLite's change tracking on a `posts` view: the tables a view reads, as SQLite resolves them
// (nested views, subqueries, CTEs; a join the planner leaves out; table-valued functions), those
// no trigger can follow (virtual tables, SQLite's own), and the token: one value for every process
// while the counter's triggers cover every table the view reads, per process otherwise.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { describeMigration } from '../../src/cli/store-commands.js'
import { tablesReadByPosts } from '../../src/store/sqlite-tables-read.js'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'

const TABLES = `CREATE TABLE a (id INTEGER PRIMARY KEY, slug TEXT, b_id INTEGER, tags JSON);
  CREATE TABLE b (id INTEGER PRIMARY KEY, name TEXT);
  CREATE TABLE c (slug TEXT PRIMARY KEY, n INTEGER) WITHOUT ROWID;
  CREATE INDEX a_slug ON a (slug);`

test('the tables a posts view reads, as SQLite resolves them, and the views no trigger can follow', () => {
  const cases: Array<[view: string, expected: ReturnType<typeof tablesReadByPosts>]> = [
    ['CREATE TABLE posts (slug TEXT PRIMARY KEY)', { tables: ['posts'] }],
    ['CREATE VIEW posts AS SELECT a.slug, b.name FROM a JOIN b ON b.id = a.b_id', { tables: ['a', 'b'] }],
    ['CREATE VIEW inner_view AS SELECT a.slug, b.name FROM a LEFT JOIN b ON b.id = a.b_id; ' +
      'CREATE VIEW posts AS SELECT slug, name, (SELECT n FROM c WHERE c.slug = inner_view.slug) AS n FROM inner_view', { tables: ['a', 'b', 'c'] }],
    ['CREATE VIEW posts AS WITH s AS (SELECT slug FROM a UNION SELECT slug FROM c) SELECT slug FROM s', { tables: ['a', 'c'] }],
    // The planner drops a LEFT JOIN on a unique key whose columns are unused: the rows depend on `a` alone.
    ['CREATE VIEW posts AS SELECT a.slug FROM a LEFT JOIN b ON b.id = a.b_id', { tables: ['a'] }],
    // A table-valued function reads only its arguments.
    ['CREATE VIEW posts AS SELECT slug, (SELECT group_concat(value) FROM json_each(a.tags)) AS tag_list FROM a', { tables: ['a'] }],
    ['CREATE VIEW posts AS SELECT \'only\' AS slug', { tables: [] }],
    ['CREATE VIRTUAL TABLE documents USING fts5(slug, body); CREATE VIEW posts AS SELECT slug FROM documents WHERE documents MATCH \'x*\'',
      { refused: 'it reads a virtual table (the database has documents), on which no trigger can be put' }],
    ['CREATE VIEW posts AS SELECT name AS slug FROM sqlite_schema', { refused: 'it reads SQLite\'s own table sqlite_schema, on which no trigger can be put' }],
    ['CREATE VIEW posts AS SELECT slug FROM a; DROP TABLE a', { refused: 'posts cannot be read (no such table: main.a)' }]
  ]
  for (const [schema, expected] of cases) {
    const database = new Database(':memory:')
    // Integers as the store reads them (BigInt), which the bytecode's operands are too.
    database.defaultSafeIntegers(true)
    try {
      database.exec(TABLES)
      database.exec(schema)
      assert.deepEqual(tablesReadByPosts(database), expected, schema)
    } finally {
      database.close()
    }
  }
})

async function withStores<T> (db: TestDatabase, use: (tokens: () => Promise<Array<string | undefined>>) => Promise<T>): Promise<T> {
  const stores: PostStore[] = []
  try {
    for (let i = 0; i < 2; i++) {
      const store = await openTestStore(db.location)
      stores.push(store)
      await store.checkSchema()
    }
    return await use(async () => await Promise.all(stores.map(async (store) => await store.readChangeToken())))
  } finally {
    for (const store of stores) await store.close()
  }
}

async function migrate (db: TestDatabase): ReturnType<PostStore['migrate']> {
  const writer = await openTestStore(db.location, { writable: true })
  try {
    return await writer.migrate()
  } finally {
    await writer.close()
  }
}

test('a view over a virtual table: migrate writes nothing and says what to do; each process keeps versions of its own, exact', async () => {
  const db = await sqliteServer.create()
  try {
    await db.exec("CREATE VIRTUAL TABLE documents USING fts5(slug, title); INSERT INTO documents VALUES ('one', 'One')")
    await db.exec('CREATE VIEW posts AS SELECT slug, title FROM documents')
    const outcome = await migrate(db)
    assert.deepEqual(outcome, { posts: 'view', tracking: { kind: 'refused', reason: 'it reads a virtual table (the database has documents), on which no trigger can be put' }, added: [] })
    assert.match(describeMigration(outcome, 'blog.db'), /^posts in blog\.db is a view: no change tracking can be installed \(it reads a virtual table .*\), so each post API process keeps posts versions of its own; to share them, make posts a view over ordinary tables and run migrate again; it is served like a table/)
    await withStores(db, async (tokens) => {
      const [first, second] = await tokens()
      assert.notEqual(first, second, 'versions per process')
      await db.exec("INSERT INTO documents VALUES ('two', 'Two')")
      const [firstAfter, secondAfter] = await tokens()
      assert.notEqual(firstAfter, first)
      assert.notEqual(secondAfter, second)
    })
  } finally {
    await db.drop()
  }
})

test('a view changed to read a table without triggers falls back to versions per process until migrate runs again', async () => {
  const db = await sqliteServer.create()
  try {
    await db.exec(`${TABLES} INSERT INTO a (id, slug, b_id) VALUES (1, 'one', 1); INSERT INTO b VALUES (1, 'Ada')`)
    await db.exec('CREATE VIEW posts AS SELECT slug FROM a')
    assert.deepEqual(await migrate(db), { posts: 'view', tracking: { kind: 'installed', tables: ['a'] }, added: ['table blog_read_api_changes', 'trigger blog_read_api_a_deleted', 'trigger blog_read_api_a_inserted', 'trigger blog_read_api_a_updated'] })
    await withStores(db, async (tokens) => {
      const [shared, same] = await tokens()
      assert.match(String(shared), /^c-?\d+$/)
      assert.equal(same, shared)
      await db.exec('DROP VIEW posts; CREATE VIEW posts AS SELECT a.slug, b.name FROM a JOIN b ON b.id = a.b_id')
      const [first, second] = await tokens()
      assert.notEqual(first, second, '`b` has no trigger: a shared value would miss its writes')
      await db.exec("UPDATE b SET name = 'Grace'")
      const [firstAfter, secondAfter] = await tokens()
      assert.notEqual(firstAfter, first)
      assert.notEqual(secondAfter, second)
      assert.deepEqual(await migrate(db), { posts: 'view', tracking: { kind: 'installed', tables: ['a', 'b'] }, added: ['trigger blog_read_api_b_deleted', 'trigger blog_read_api_b_inserted', 'trigger blog_read_api_b_updated'] })
      const [again, alike] = await tokens()
      assert.match(String(again), /^c-?\d+$/)
      assert.equal(alike, again)
      await db.exec("UPDATE b SET name = 'Grace Hopper'")
      const [moved, movedAlike] = await tokens()
      assert.notEqual(moved, again)
      assert.equal(movedAlike, moved)
    })
  } finally {
    await db.drop()
  }
})
