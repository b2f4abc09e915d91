// Two post API processes on one store answer the same posts version for the same state, so that a
// front spreading its calls over both (or over the workers of one `--workers N`) confirms its
// copies with either: SQLite (the change counter `migrate` installs) and PostgreSQL (a table
// migrate never ran on). Through the built executable (`npm run build`).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { VERSION_PATH } from '../../src/contract/posts-version.js'
import { startClis, type RunningCli } from '../helpers/cli.js'
import { createSeededSqlite, postgresServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** Tries before giving up on finding both versions read with no commit between (other tests write on the same server). */
const ATTEMPTS = 50

const sqliteSeeded: TestServer = { skip: false, create: createSeededSqlite }
const postgresOperatorTable: TestServer = {
  skip: postgresServer.skip,
  create: async () => {
    const db = await postgresServer.create()
    await db.exec("CREATE TABLE posts (slug text PRIMARY KEY, title text); INSERT INTO posts VALUES ('hello-world', 'Hello')")
    return db
  }
}

async function versionOf (api: RunningCli): Promise<string> {
  const { version } = (await get(api.urls.posts ?? '', VERSION_PATH)).json() as { version: string | null }
  assert.equal(typeof version, 'string')
  return version as string
}

/** The version both processes read between two equal reads of the first one, which nothing was committed between. */
async function agreedVersion (a: RunningCli, b: RunningCli): Promise<string> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const first = await versionOf(a)
    const other = await versionOf(b)
    if (await versionOf(a) !== first) continue
    assert.equal(other, first, 'the second process read another version of the same state')
    return first
  }
  throw new Error(`the store changed during each of ${ATTEMPTS} attempts`)
}

for (const [name, server] of [['SQLite', sqliteSeeded], ['PostgreSQL', postgresOperatorTable]] as const) {
  describeOrSkip(`${name}: two post API processes on one store`, { skip: server.skip, timeout: 60_000 }, () => {
    let db: TestDatabase
    let apis: RunningCli[]

    before(async () => {
      db = await server.create()
      const url = db.location.dialect === 'sqlite' ? db.location.filename : db.location.url
      const postsApi = (): Parameters<typeof startClis>[0] => [['posts-api', '--posts-port', '0'], { DATABASE_URL: url }, ['posts']]
      apis = await startClis(postsApi(), postsApi())
    })

    after(async () => {
      await Promise.all((apis ?? []).map(async (api) => await api.stop()))
      await db?.drop()
    })

    test('answer the same version until a commit moves it for both, and each then serves the commit', async () => {
      const [a, b] = apis as [RunningCli, RunningCli]
      const before = await agreedVersion(a, b)
      assert.doesNotMatch(before, /\./, 'no process nonce in the version')
      await db.exec("UPDATE posts SET title = 'Moved' WHERE slug = 'hello-world'")
      const moved = await agreedVersion(a, b)
      assert.notEqual(moved, before)
      for (const api of [a, b]) {
        const post = await get(api.urls.posts ?? '', '/api/post/hello-world')
        assert.equal((post.json() as { title: string }).title, 'Moved')
      }
    })
  })
}
