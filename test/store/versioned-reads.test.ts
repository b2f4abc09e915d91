// Versioned reads on every store: each post comes with the row version readRowVersions gives its
// row, whatever `fields` asks (a token labels the state of what an answer carries); on PostgreSQL
// a `posts` view, which has no `xmin`, falls back to a digest of each row as served, the same way.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { PostStore, VersionedPost } from '../../src/store/store.js'
import { openTestStore, postgresServer, SERVERS, seedTestStore, type TestDatabase } from '../helpers/databases.js'

async function streamed (store: PostStore, fields?: readonly string[]): Promise<VersionedPost[]> {
  const read: VersionedPost[] = []
  for await (const batch of store.streamVersionedPosts({ fields })) read.push(...batch)
  return read
}

async function checkVersionedReads (database: TestDatabase): Promise<void> {
  const store = await openTestStore(database.location)
  try {
    await store.checkSchema()
    const versions = await store.readRowVersions()
    assert.ok(versions.size >= 3)
    for (const fields of [undefined, ['slug', 'title']]) {
      const whole = await streamed(store, fields)
      assert.deepEqual(new Map(whole.map(({ post, version }) => [post.slug, version])), versions, 'the same versions as readRowVersions')
      const slugs = [...versions.keys()].sort()
      const found = await store.findVersionedPostsBySlugs([...slugs, 'absent'], { fields })
      assert.deepEqual(found.map(({ post }) => post.slug), slugs, 'in the order asked, absent ones left out')
      for (const { post, version } of found) {
        assert.equal(version, versions.get(post.slug))
        assert.deepEqual(post, await store.findPostBySlug(post.slug, { fields }), 'the post as a plain read serves it')
      }
    }
  } finally {
    await store.close()
  }
}

for (const [name, server] of SERVERS) {
  test(`${name}: a versioned read gives each post its row's version, with or without fields`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    await seedTestStore(database.location)
    await checkVersionedReads(database)
  })
}

test('PostgreSQL: a `posts` view has no xmin; its versions are digests of the rows as served, read and versioned alike', { skip: postgresServer.skip }, async (t) => {
  const database = await postgresServer.create()
  t.after(() => database.drop())
  await seedTestStore(database.location)
  await database.exec('ALTER TABLE posts RENAME TO posts_table; CREATE VIEW posts AS SELECT * FROM posts_table')
  await checkVersionedReads(database)
  const store = await openTestStore(database.location)
  t.after(() => store.close())
  await store.checkSchema()
  const before = await store.readRowVersions()
  assert.ok([...before.values()].every((version) => /^[\w-]{16}$/.test(version)), 'digests, not transaction ids')
  await database.exec('UPDATE posts_table SET title = title')
  assert.deepEqual(await store.readRowVersions(), before, 'a write that changes nothing moves no digest')
  await database.exec("UPDATE posts_table SET title = 'Edited' WHERE slug = 'hello-world'")
  const after = await store.readRowVersions()
  assert.notEqual(after.get('hello-world'), before.get('hello-world'))
  assert.equal(after.get('two-tiers'), before.get('two-tiers'))
})

test('PostgreSQL: versions are digests that a rewrite of the same values, VACUUM FREEZE and another process leave as they were', { skip: postgresServer.skip }, async (t) => {
  const database = await postgresServer.create()
  t.after(() => database.drop())
  await seedTestStore(database.location)
  const store = await openTestStore(database.location)
  t.after(() => store.close())
  await store.checkSchema()
  const before = await store.readRowVersions()
  await database.exec('UPDATE posts SET title = title, content = content')
  assert.deepEqual(await store.readRowVersions(), before, 'xmin moved, the content did not')
  await database.exec('VACUUM FREEZE posts')
  assert.deepEqual(await store.readRowVersions(), before, 'after VACUUM FREEZE')
  const other = await openTestStore(database.location)
  t.after(() => other.close())
  await other.checkSchema()
  assert.deepEqual(await other.readRowVersions(), before, 'a process that never saw the earlier stamps')
  await database.exec("UPDATE posts SET title = 'Edited' WHERE slug = 'hello-world'")
  const after = await store.readRowVersions()
  assert.deepEqual([...after.keys()].filter((slug) => after.get(slug) !== before.get(slug)), ['hello-world'])
  assert.deepEqual(await other.readRowVersions(), after)
})
