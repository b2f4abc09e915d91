// Every way a write reaches PostgreSQL shows in the NEXT answer of both tiers, on a table
// `migrate` never ran on: triggers disabled, session_replication_role = replica (what pg_restore
// and logical-replication apply use), TRUNCATE, and a commit that another transaction overtook
// while it was still open. Each case first lets both tiers hold the post under a version (the
// front then confirms its copy with one version read), then writes, then asks once.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import pg from 'pg'
import { POSTS_VERSION_HEADER } from '../../src/contract/posts-version.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** An operator's table: no migrate, so nothing of ours in the database. */
export const OPERATOR_TABLE = `CREATE TABLE posts (id serial PRIMARY KEY, slug text NOT NULL UNIQUE, title text,
  published_at timestamptz);
  CREATE TABLE overtaking (x int);
  INSERT INTO posts (slug, title, published_at) VALUES ('fresh', 'Before', '2024-01-01T00:00:00Z')`

export interface Served {
  db: TestDatabase
  tiers: Tiers
  /** A second editor, on a connection of its own. */
  other: pg.Client
}

export async function serve (t: TestContext, server: TestServer): Promise<Served> {
  const db = await server.create()
  const closing: Array<() => Promise<void>> = [async () => { await db.drop() }]
  // Last opened, first closed: the database is dropped (its connections ended) last.
  t.after(async () => { for (const close of closing.reverse()) await close() })
  await db.exec(OPERATOR_TABLE)
  const store = await openTestStore(db.location)
  await store.checkSchema()
  const tiers = await startTiers(store)
  closing.push(async () => { await tiers.close() })
  const other = new pg.Client({ connectionString: (db.location as { url: string }).url })
  await other.connect()
  closing.push(async () => { await other.end() })
  return { db, tiers, other }
}

/** Both tiers hold the post and the list as they are now, labelled with a version. */
export async function hold ({ tiers }: Served, title: string): Promise<void> {
  for (const base of [tiers.posts.url, tiers.front.url, tiers.front.url]) {
    const post = await get(base, base === tiers.posts.url ? '/api/post/fresh' : '/api/blog/fresh')
    assert.equal((post.json() as { title: string }).title, title)
    const list = await get(base, base === tiers.posts.url ? '/api/posts' : '/api/blog')
    assert.equal((list.json() as Array<{ title: string }>)[0]?.title, title)
  }
  assert.match(String((await get(tiers.posts.url, '/api/post/fresh')).headers[POSTS_VERSION_HEADER]), /^s\d+/)
}

/** The next answer of each tier, for the post and for the list. */
export async function assertNextTitle ({ tiers }: Served, title: string): Promise<void> {
  assert.equal(((await get(tiers.posts.url, '/api/post/fresh')).json() as { title: string }).title, title, 'the post API')
  assert.equal(((await get(tiers.front.url, '/api/blog/fresh')).json() as { title: string }).title, title, 'the front')
  assert.equal(((await get(tiers.posts.url, '/api/posts')).json() as Array<{ title: string }>)[0]?.title, title, 'the post API list')
  assert.equal(((await get(tiers.front.url, '/api/blog')).json() as Array<{ title: string }>)[0]?.title, title, 'the front list')
}

export function describePostgresWritePaths (name: string, server: TestServer): void {
  describeOrSkip(`${name}: every write path shows in the next answer of both tiers, without migrate`, { skip: server.skip }, () => {
    const bypasses = {
      'with every trigger of the table disabled': 'ALTER TABLE posts DISABLE TRIGGER ALL',
      'under session_replication_role = replica (pg_restore, logical-replication apply)': 'SET session_replication_role = replica'
    }
    for (const [how, setUp] of Object.entries(bypasses)) {
      test(`an UPDATE ${how}`, async (t) => {
        const served = await serve(t, server)
        await served.db.exec(setUp)
        await hold(served, 'Before')
        await served.db.exec("UPDATE posts SET title = 'After' WHERE slug = 'fresh'")
        await assertNextTitle(served, 'After')
      })
    }

    test('TRUNCATE', async (t) => {
      const served = await serve(t, server)
      await hold(served, 'Before')
      await served.db.exec('TRUNCATE posts')
      assertProblem(await get(served.tiers.posts.url, '/api/post/fresh'), 'post-not-found')
      assertProblem(await get(served.tiers.front.url, '/api/blog/fresh'), 'post-not-found')
      assert.deepEqual((await get(served.tiers.posts.url, '/api/posts')).json(), [])
      assertProblem(await get(served.tiers.front.url, '/api/blog'), 'no-posts')
    })

    test('a transaction overtaken while open: its commit, which raises no transaction id past the newest, still shows', async (t) => {
      const served = await serve(t, server)
      await served.db.exec("BEGIN; UPDATE posts SET title = 'After' WHERE slug = 'fresh'")
      // A later transaction id ends first: the snapshot's xmax is already past the open one's.
      await served.other.query('INSERT INTO overtaking VALUES (1)')
      await hold(served, 'Before')
      await served.db.exec('COMMIT')
      await assertNextTitle(served, 'After')
    })
  })
}
