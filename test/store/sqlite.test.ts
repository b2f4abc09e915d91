import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { describe, test } from 'node:test'
import Database from 'better-sqlite3'
import type { SortKey } from '../../src/contract/cursor.js'
import { unsupportedNodeApi } from '../../src/store/sqlite-store.js'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, seedTestStore, sqliteServer } from '../helpers/databases.js'
import { describeStoreContract } from './store-contract.js'
import { describeStoreErrors, LIST_PATH, typeErrorFrom } from './store-errors.js'

describeStoreContract('SQLite', sqliteServer, {
  normalisationTable: [
    `CREATE TABLE posts (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT, published_at TEXT,
      is_draft BOOLEAN, meta JSON, bad_meta JSON, note TEXT, views INTEGER, rating REAL, cover BLOB)`,
    `INSERT INTO posts VALUES (9007199254740993, 'first-post', 'First', '2024-01-02 03:04:05', 1,
      '{"a":[1,2],"b":null}', 'not json', NULL, 42, 1.5, X'DEADBEEF')`,
    "INSERT INTO posts (id, slug, is_draft) VALUES (2, 'second-post', 0)"
  ],
  expectedFirstPost: {
    id: '9007199254740993',
    slug: 'first-post',
    title: 'First',
    published_at: '2024-01-02 03:04:05', // SQLite text timestamps are served as stored
    is_draft: true,
    meta: { a: [1, 2], b: null },
    bad_meta: 'not json',
    note: null,
    views: 42,
    rating: 1.5
  },
  tagsColumn: { type: 'TEXT', anyText: true },
  timestamp: (iso) => `'${new Date(iso).toISOString()}'`
})

describeStoreErrors('SQLite', sqliteServer, {
  outages: [
    { name: 'the posts table renamed away', cause: async (db) => { await db.exec('ALTER TABLE posts RENAME TO posts_away') } },
    { name: 'the column the list is ordered by dropped', paths: [LIST_PATH], cause: async (db) => { await db.exec('ALTER TABLE posts DROP COLUMN published_at') } },
    {
      name: 'the file locked by a writer beyond the busy time-out',
      // WAL readers are never locked out: in rollback-journal mode an exclusive writer locks them out.
      prepare: async (db) => { await db.exec('PRAGMA journal_mode = DELETE') },
      cause: async (db) => { await db.exec('BEGIN EXCLUSIVE') }
    },
    // The open connection still reads an unlinked file: the list, which opens a connection of its own, fails.
    {
      name: 'the database file gone',
      paths: [LIST_PATH],
      cause: async (db) => { for (const suffix of ['', '-wal', '-shm']) rmSync(db.name + suffix, { force: true }) }
    },
    { name: 'the database directory gone', paths: [LIST_PATH], cause: async (db) => { rmSync(dirname(db.name), { recursive: true, force: true }) } }
  ],
  defects: [
    {
      name: 'an unexpected SQLite error (malformed JSON in a view)',
      logged: /malformed JSON/,
      cause: async (db) => {
        await db.exec(`ALTER TABLE posts RENAME TO posts_table;
          CREATE VIEW posts AS SELECT *, json_extract('not json', '$') AS broken FROM posts_table`)
      }
    },
    typeErrorFrom(Database.prototype, 'prepare')
  ]
})

describe('SQLite pages over published_at of other types', () => {
  test('integers (beyond 2^53 too) and reals page exactly, undated last', async () => {
    const db = await sqliteServer.create()
    try {
      await db.exec(`CREATE TABLE posts (slug TEXT NOT NULL PRIMARY KEY, published_at INTEGER);
        INSERT INTO posts VALUES ('a', 1700000000), ('b', 9007199254740993), ('c', 9007199254740993), ('d', 9007199254740992),
          ('e', NULL), ('f', 1.5), ('g', 1700000000), ('h', NULL), ('i', -3)`)
      const store = await openTestStore(db.location)
      await store.checkSchema()
      const whole: string[] = []
      for await (const posts of store.streamPosts()) whole.push(...posts.map((post) => post.slug))
      assert.deepEqual(whole, ['b', 'c', 'd', 'a', 'g', 'f', 'i', 'e', 'h'])
      for (const limit of [1, 2, 4]) {
        const slugs: string[] = []
        let after: SortKey | undefined
        do {
          const page = await store.readPage({ limit, ...(after === undefined ? {} : { after }) })
          slugs.push(...page.posts.map((p) => p.slug))
          after = page.next
        } while (after !== undefined)
        assert.deepEqual(slugs, whole, `limit ${limit}`)
      }
      await store.close()
    } finally {
      await db.drop()
    }
  })
})

describe('SQLite binding', () => {
  test('FTS5: a full-text table and a MATCH query answer through the store\'s own connections', async () => {
    const db = await sqliteServer.create()
    try {
      // `posts` is a view of the posts that match, so both of the store's reads run the MATCH:
      // a page on its connection, the list on the one it opens per stream.
      await db.exec(`CREATE VIRTUAL TABLE documents USING fts5(slug UNINDEXED, title, content);
        INSERT INTO documents VALUES ('fts-one', 'One', 'Searching SQLite text'), ('fts-two', 'Two', 'nothing here'),
          ('fts-three', 'Three', 'what a full-text search finds');
        CREATE VIEW posts AS SELECT slug, title FROM documents WHERE documents MATCH 'search*'`)
      const store = await openTestStore(db.location)
      try {
        await store.checkSchema()
        const page = await store.readPage({ limit: 10 })
        assert.deepEqual(page.posts.map((post) => ({ ...post })), [{ slug: 'fts-one', title: 'One' }, { slug: 'fts-three', title: 'Three' }])
        const streamed: string[] = []
        for await (const posts of store.streamPosts()) streamed.push(...posts.map((post) => post.slug))
        assert.deepEqual(streamed, ['fts-one', 'fts-three'])
      } finally {
        await store.close()
      }
    } finally {
      await db.drop()
    }
  })

  test('a Node without Node-API 10 is refused with a sentence, before the addon could crash it', () => {
    assert.equal(unsupportedNodeApi('9', 'v20.20.2'), 'SQLite needs Node.js 22.14 or newer (Node-API 10); this is Node.js v20.20.2')
    assert.equal(unsupportedNodeApi(undefined, 'v20.20.2')?.startsWith('SQLite needs'), true)
    assert.equal(unsupportedNodeApi('10', 'v22.14.0'), undefined)
    assert.equal(unsupportedNodeApi(process.versions.napi, process.version), undefined)
  })
})

describe('SQLite change tokens', () => {
  const readers = async (filename: string): Promise<[PostStore, PostStore]> => {
    const stores = [await openTestStore({ dialect: 'sqlite', filename }), await openTestStore({ dialect: 'sqlite', filename })] as [PostStore, PostStore]
    for (const store of stores) await store.checkSchema()
    return stores
  }

  test('after migrate: the same token on two connections, moved by every write, DELETE without WHERE included; without the counter, one per connection', async (t) => {
    const db = await sqliteServer.create()
    t.after(async () => { await db.drop() })
    const filename = db.name
    await seedTestStore({ dialect: 'sqlite', filename })
    const [a, b] = await readers(filename)
    t.after(async () => { await a.close(); await b.close() })
    const seen = new Set<string>()
    for (const write of ["UPDATE posts SET title = 'x'", "INSERT INTO posts (slug, title) VALUES ('new-post', 'New')", 'DELETE FROM posts']) {
      const token = await a.readChangeToken()
      assert.match(String(token), /^c-?\d+$/)
      assert.equal(await b.readChangeToken(), token)
      assert.ok(!seen.has(String(token)))
      seen.add(String(token))
      await db.exec(write)
      assert.notEqual(await a.readChangeToken(), token)
    }
    // A trigger dropped: each connection falls back to its own token, which still moves.
    await db.exec('DROP TRIGGER blog_read_api_posts_updated')
    const [own, other] = [await a.readChangeToken(), await b.readChangeToken()]
    assert.match(String(own), /\./)
    assert.notEqual(own, other)
    await db.exec("INSERT INTO posts (slug, title) VALUES ('after-drop', 'After')")
    assert.notEqual(await a.readChangeToken(), own)
    assert.notEqual(await b.readChangeToken(), other)
  })

  test('the counter table dropped by another connection: each connection falls back to its own token, never an error', async (t) => {
    const db = await sqliteServer.create()
    t.after(async () => { await db.drop() })
    await seedTestStore({ dialect: 'sqlite', filename: db.name })
    const [a, b] = await readers(db.name)
    t.after(async () => { await a.close(); await b.close() })
    const counted = await a.readChangeToken()
    assert.match(String(counted), /^c-?\d+$/)
    assert.equal(await a.readChangeToken(), counted, 'nothing committed: the same token')
    // Its triggers with it, or writes to posts would fail.
    await db.exec('DROP TABLE blog_read_api_changes; DROP TRIGGER blog_read_api_posts_inserted; DROP TRIGGER blog_read_api_posts_updated; DROP TRIGGER blog_read_api_posts_deleted')
    const [own, other] = [await a.readChangeToken(), await b.readChangeToken()]
    assert.match(String(own), /\./)
    assert.notEqual(own, other)
    await db.exec("UPDATE posts SET title = 'moved'")
    assert.notEqual(await a.readChangeToken(), own)
  })
})
