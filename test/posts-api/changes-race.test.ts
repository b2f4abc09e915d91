// A writer committing between the moment the post API learns the state and the moment it reads
// the posts it answers with, on every store: the answer must still be labelled with the state
// of the posts it carries, so that when the store comes back to an earlier state (a post added
// and removed again, an edit undone) the next `?since=` still brings the copy to the current
// list. The store wrapper runs the writer right before the route's read of posts, every time.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { Post, PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, SERVERS, seedTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { getJson } from '../helpers/sync-posts-api.js'
import { listen, silentLogger } from '../helpers/tiers.js'

/** The reads of posts a route answers with (not the versions or the token that label them). */
const POST_READS = new Set(['streamPosts', 'streamVersionedPosts', 'findPostBySlug', 'findPostsBySlugs', 'findVersionedPostsBySlugs'])

type Before = (write: () => Promise<void>, times?: number) => void

/** `store`, with `before(write, times)` running `write` right before each of its next `times` reads of posts. */
function withWriterBeforeReads (store: PostStore): { store: PostStore, before: Before } {
  let pending: (() => Promise<void>) | undefined
  let left = 0
  const runPending = async (): Promise<void> => {
    const write = pending
    if (--left <= 0) pending = undefined
    await write?.()
  }
  const wrapped = new Proxy(store, {
    get (target, name) {
      const value: unknown = Reflect.get(target, name, target)
      if (typeof value !== 'function') return value
      const method = (value as (...args: unknown[]) => unknown).bind(target)
      if (typeof name !== 'string' || !POST_READS.has(name)) return method
      if (name.startsWith('stream')) {
        return async function * (...args: unknown[]) {
          await runPending()
          yield * method(...args) as AsyncIterable<unknown>
        }
      }
      return async (...args: unknown[]) => {
        await runPending()
        return await method(...args)
      }
    }
  })
  return {
    store: wrapped,
    before: (write, times = 1) => {
      pending = write
      left = times
    }
  }
}

interface Copy { token: string, posts: Map<string, Post> }

const sorted = (posts: Iterable<Post>): Post[] => [...posts].sort((a, b) => a.slug < b.slug ? -1 : 1)

async function startPostsApi (t: TestContext, database: TestDatabase): Promise<{ url: string, before: Before }> {
  await seedTestStore(database.location)
  const opened = await openTestStore(database.location)
  await opened.checkSchema()
  const { store, before } = withWriterBeforeReads(opened)
  const posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger })))
  t.after(async () => { await posts.app.close(); await opened.close() })
  return { url: posts.url, before }
}

function describeRace (name: string, server: TestServer): void {
  test(`${name}: a whole list read while a post is added, then removed again, still leads the copy to the current list`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    const api = await startPostsApi(t, database)
    const changes = `${api.url}/api/posts/changes`
    await getJson(changes)
    api.before(async () => await database.exec("INSERT INTO posts (slug, title, content, tags) VALUES ('passing', 'Passing', 'Body', '[]')"))
    const whole = await getJson(changes)
    const copy: Copy = { token: whole.until, posts: new Map(whole.upserted.map((post: Post) => [post.slug, post])) }
    await database.exec("DELETE FROM posts WHERE slug = 'passing'")
    await applyDelta(copy, changes)
    assert.deepEqual(sorted(copy.posts.values()), sorted(await getJson(`${api.url}/api/posts`)))
  })

  test(`${name}: a delta whose post is edited again while it is read, then edited back, still leads the copy to the current list`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    const api = await startPostsApi(t, database)
    const changes = `${api.url}/api/posts/changes`
    const whole = await getJson(changes)
    const copy: Copy = { token: whole.until, posts: new Map(whole.upserted.map((post: Post) => [post.slug, post])) }
    await database.exec("UPDATE posts SET title = 'Edited' WHERE slug = 'hello-world'")
    api.before(async () => await database.exec("UPDATE posts SET title = 'Edited again' WHERE slug = 'hello-world'"))
    await applyDelta(copy, changes)
    await database.exec("UPDATE posts SET title = 'Edited' WHERE slug = 'hello-world'")
    await applyDelta(copy, changes)
    assert.deepEqual(sorted(copy.posts.values()), sorted(await getJson(`${api.url}/api/posts`)))
  })

  test(`${name}: a writer that moves a delta's post at every read gets the client a 410, never a delta it would keep wrong`, { skip: server.skip }, async (t) => {
    const database = await server.create()
    t.after(() => database.drop())
    const api = await startPostsApi(t, database)
    const changes = `${api.url}/api/posts/changes`
    const { until } = await getJson(changes)
    await database.exec("UPDATE posts SET title = 'Edited' WHERE slug = 'hello-world'")
    let edits = 0
    api.before(async () => await database.exec(`UPDATE posts SET title = 'Edit ${++edits}' WHERE slug = 'hello-world'`), 3)
    assertProblem(await get(api.url, `/api/posts/changes?since=${until}`), 'sync-expired')
    assert.equal(edits, 3, 'each of the three reads was moved')
    // Once the writer stops, the same token gets its delta.
    const delta = await getJson(`${changes}?since=${until}`)
    assert.deepEqual(delta.upserted.map((post: Post) => post.title), ['Edit 3'])
  })
}

async function applyDelta (copy: Copy, changes: string): Promise<void> {
  const delta = await getJson(`${changes}?since=${copy.token}`)
  assert.equal(delta.since, copy.token)
  for (const slug of delta.deleted) copy.posts.delete(slug)
  for (const post of delta.upserted) copy.posts.set(post.slug, post)
  copy.token = delta.until
}

for (const [name, server] of SERVERS) describeRace(name, server)
