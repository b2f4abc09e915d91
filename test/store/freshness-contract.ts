// The store contract's freshness, on every store: a committed write shows in the next answer of
// both tiers; the posts version labels every answer of the post API until a commit moves it;
// under concurrent writes no answer of either tier is older than its request. Part of the store
// contract suite (store-contract.ts).
import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { VERSION_PATH } from '../../src/contract/posts-version.js'
import type { TestDatabase } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import type { StoreContractSuite } from './store-contract-suite.js'

/** Reads of the posts version before and after a few answers, until nothing moved it between them. */
const VERSION_ATTEMPTS = 20

/** Declares the freshness tests in the describe of `suite`. */
export function declareFreshnessTests (suite: StoreContractSuite): void {
  const { migratedStore, withTiers, insert } = suite
  let db: TestDatabase
  before(() => { db = suite.db() })

  test('a committed insert, update and delete is visible in the next response of both tiers', async () => {
    const store = await migratedStore()
    await withTiers(store, async ({ posts, front }) => {
      assertProblem(await get(front.url, '/api/blog'), 'no-posts')
      assert.deepEqual((await get(posts.url, '/api/posts')).json(), [])
      // Absent twice: the front holds that answer (under its posts version, where the store has one).
      assertProblem(await get(front.url, '/api/blog/fresh-post'), 'post-not-found')
      assertProblem(await get(front.url, '/api/blog/fresh-post'), 'post-not-found')

      await db.exec(insert('fresh-post', '2024-02-02T00:00:00Z', 'Fresh'))
      assert.deepEqual(((await get(front.url, '/api/blog')).json() as Array<{ slug: string }>).map((p) => p.slug), ['fresh-post'])
      assert.equal(((await get(front.url, '/api/blog/fresh-post')).json() as { title: string }).title, 'Fresh')

      await db.exec("UPDATE posts SET title = 'Updated' WHERE slug = 'fresh-post'")
      assert.equal(((await get(front.url, '/api/blog/fresh-post')).json() as { title: string }).title, 'Updated')
      assert.equal(((await get(posts.url, '/api/posts')).json() as Array<{ title: string }>)[0]?.title, 'Updated')

      await db.exec("DELETE FROM posts WHERE slug = 'fresh-post'")
      assertProblem(await get(front.url, '/api/blog/fresh-post'), 'post-not-found')
      assertProblem(await get(front.url, '/api/blog'), 'no-posts')
    })
  })

  test('the posts version: on every answer of the post API, the same at /api/posts/version until a commit moves it', async () => {
    const store = await migratedStore()
    await db.exec(insert('versioned', '2024-01-01T00:00:00Z'))
    await withTiers(store, async ({ posts }) => {
      const read = async (): Promise<TestResponse[]> => [
        await get(posts.url, VERSION_PATH),
        await get(posts.url, '/api/posts'), await get(posts.url, '/api/post/versioned'), await get(posts.url, '/api/post/absent'),
        await get(posts.url, VERSION_PATH)
      ]
      let answers = await read()
      const [now] = answers as [TestResponse]
      assert.equal(now.status, 200)
      assert.equal(now.headers['cache-control'], 'no-store')
      if (!store.tracksChanges) {
        // A store that cannot tell (MySQL/MariaDB): no version anywhere, so the front revalidates per request.
        assert.deepEqual(now.json(), { version: null })
        for (const answer of answers) assert.equal(answer.headers['posts-version'], undefined)
        return
      }
      // PostgreSQL's version moves with any transaction on the server (other tests' too): the
      // answers count when the version read before them is the one read after them.
      for (let attempt = 1; answers[0]?.headers['posts-version'] !== answers[4]?.headers['posts-version']; attempt++) {
        assert.ok(attempt < VERSION_ATTEMPTS, `the version moved during each of ${VERSION_ATTEMPTS} reads`)
        answers = await read()
      }
      const version = (answers[0]?.json() as { version: string }).version
      assert.match(version, /^[\w.~-]{1,128}$/)
      assert.deepEqual(answers.map((answer) => answer.headers['posts-version']), [version, version, version, version, version])
      await db.exec("UPDATE posts SET title = 'moved' WHERE slug = 'versioned'")
      const moved = await get(posts.url, '/api/post/versioned')
      assert.equal((moved.json() as { title: string }).title, 'moved')
      assert.notEqual(moved.headers['posts-version'], version)
    })
  })

  test('under concurrent writes, no response of either tier is older than its request', async () => {
    const store = await migratedStore()
    await db.exec(insert('counter', '2024-01-01T00:00:00Z', '0'))
    await withTiers(store, async ({ posts, front }) => {
      const detail = (body: unknown): string => (body as { title: string }).title
      const list = (body: unknown): string => (body as Array<{ title: string }>)[0]?.title ?? ''
      const readers: Array<[string, string, (body: unknown) => string]> = [
        [front.url, '/api/blog/counter', detail], [front.url, '/api/blog/counter', detail],
        [front.url, '/api/blog', list], [posts.url, '/api/post/counter', detail], [posts.url, '/api/posts', list]
      ]
      let committed = 0
      // Per reader, the last commit made before a request of its own that it has checked: the
      // writer commits again once every reader has checked an answer to the last commit (so
      // each commit is read by all, whatever the machine's speed). An object, so that the
      // reader loop sees the writer's change (it happens across awaits).
      const checkedAfter = readers.map(() => 0)
      const progress = { writing: true, readersDone: false }
      const writer = (async () => {
        for (let i = 1; i <= 25 && !progress.readersDone; i++) {
          await db.exec(`UPDATE posts SET title = '${i}' WHERE slug = 'counter'`)
          committed = i
          await pollUntil(`every reader checked an answer after commit ${i}`, () => progress.readersDone || checkedAfter.every((floor) => floor >= i), { everyMs: 1 })
        }
      })().finally(() => { progress.writing = false })
      const reader = async (index: number, [base, path, title]: [string, string, (body: unknown) => string]): Promise<number> => {
        let checked = 0
        while (progress.writing) {
          const floor = committed
          const response = await get(base, path)
          assert.equal(response.status, 200)
          assert.ok(Number(title(response.json())) >= floor, `${path} answered title ${title(response.json())} after commit ${floor}`)
          checkedAfter[index] = floor
          checked++
        }
        return checked
      }
      const counts = await Promise.all(readers.map(async (args, index) => await reader(index, args)))
        .finally(() => { progress.readersDone = true }) // one failed: the writer stops too
        .finally(async () => { await writer })
      assert.ok(counts.every((n) => n >= 25), `each reader checked each commit: ${counts.join(', ')}`)
    })
  })
}
