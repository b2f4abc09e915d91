// SQLite reads every row's version on the thread that serves requests (better-sqlite3 is
// synchronous), so the read is streamed and the event loop given back between batches: a held
// answer is served while a read of many rows runs (told by which ends first, not by time), and
// the versions are those the digest function gives each row in one query.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import Database from 'better-sqlite3'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { registerRowDigest, SQLITE_ROW_DIGEST } from '../../src/store/sqlite-row-digest.js'
import { testConfig } from '../helpers/config.js'
import { createSeededSqlite, openTestStore } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { listen, silentLogger } from '../helpers/tiers.js'

const ROWS = 5000

test('a held answer is served while SQLite reads every row\'s version; the versions are unchanged', async (t) => {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  await database.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})
    INSERT INTO posts (slug, title, content, tags) SELECT 'post-' || i, 'Post ' || i, printf('%.4000c', 'x') || i, '[]' FROM n`)
  const store = await openTestStore(database.location)
  await store.checkSchema()
  const posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger })))
  t.after(async () => { await posts.app.close(); await store.close() })
  assert.equal((await get(posts.url, '/api/post/hello-world')).status, 200, 'held from now on')

  const ended: string[] = []
  const versions = store.readRowVersions().then((read) => { ended.push('versions'); return read })
  const answer = get(posts.url, '/api/post/hello-world').then((response) => { ended.push('answer'); return response })
  assert.equal((await answer).status, 200)
  const read = await versions
  assert.deepEqual(ended, ['answer', 'versions'], 'the answer did not wait for the read of every row')

  // The same versions as one query of the digest function over every column.
  const reader = new Database(database.name, { readonly: true })
  t.after(() => reader.close())
  reader.defaultSafeIntegers(true)
  registerRowDigest(reader)
  const columns = (reader.prepare('PRAGMA table_info(posts)').all() as Array<{ name: string }>).map(({ name }) => `"${name}"`).join(', ')
  const expected = reader.prepare(`SELECT slug, ${SQLITE_ROW_DIGEST}(${columns}) AS version FROM posts`).all() as Array<{ slug: string, version: string }>
  assert.equal(read.size, ROWS + 3)
  assert.deepEqual(read, new Map(expected.map(({ slug, version }) => [slug, version])))
})
