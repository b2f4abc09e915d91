// Cache tags over real HTTP, both tiers, on SQLite (and PostgreSQL when it is configured): every
// answer about posts names what it depends on in Surrogate-Key and Cache-Tag (their 304s too),
// answers that depend on nothing stored name nothing, CACHE_TAG_HEADERS renames or removes the
// headers, a tag filter of long tags stays within the header budget, and after a commit every
// answer whose body changed names a tag the change purges, while another post's answer does not.
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { after, before, describe, test } from 'node:test'
import { createPostUrl, parseSiteUrl } from '../../src/feeds/post-url.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { PostStore } from '../../src/store/store.js'
import { changeCacheTags } from '../../src/sync/cache-tags.js'
import { createCacheTagHeaders, MAX_TAG_HEADER_BYTES } from '../../src/sync/cache-tag-headers.js'
import { openTestStore, postgresServer, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { testConfig } from '../helpers/config.js'
import { get, type TestResponse } from '../helpers/http.js'
import { listen, silentLogger, startFront, type RunningApp } from '../helpers/tiers.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const site = parseSiteUrl('https://blog.example/')
const feeds = { site: { url: site, postUrl: createPostUrl(site) }, postUrlTemplate: '{site}/blog/{slug}', feedSize: 20 }

/** The keys of both default headers, checked to be the same keys, each header with its own separator. */
function tagsOf (response: TestResponse): string[] | undefined {
  const key = response.headers['surrogate-key']
  const tag = response.headers['cache-tag']
  if (key === undefined && tag === undefined) return undefined
  assert.equal(typeof key, 'string', 'Surrogate-Key, once')
  assert.equal(typeof tag, 'string', 'Cache-Tag, once')
  const keys = String(key).split(' ')
  assert.deepEqual(String(tag).split(','), keys)
  return keys
}

function cacheTagSuite (name: string, server: TestServer): void {
  describeOrSkip(`cache tags on ${name}`, { skip: server.skip }, () => {
    let database: TestDatabase
    let store: PostStore
    let posts: RunningApp
    let front: RunningApp
    let streaming: RunningApp
    before(async () => {
      database = await server.create()
      const writer = await openTestStore(database.location, { writable: true })
      await writer.migrate()
      await writer.close()
      await database.exec(`INSERT INTO posts (id, slug, title, content, tags, published_at) VALUES
        (1, 'one', 'One', 'First.', '["rust", "web dev"]', '2024-05-03T00:00:00Z'),
        (2, 'two', 'Two', 'Second.', '["sql"]', '2024-05-02T00:00:00Z'),
        (3, 'three', 'Three', 'Third.', '[]', '2024-05-01T00:00:00Z')`)
      store = await openTestStore(database.location)
      await store.checkSchema()
      posts = await listen(buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger })))
      front = await startFront(new URL(posts.url), { feeds })
      // Relays every list as a stream (the path a list beyond the buffer limit takes).
      streaming = await startFront(new URL(posts.url), { listBufferLimit: 1 })
    })
    after(async () => {
      await streaming?.app.close()
      await front?.app.close()
      await posts?.app.close()
      await store?.close()
      await database?.drop()
    })

    test('lists, posts, their 404s, feeds, the sitemap and the tag counts name what they depend on; 304s too', async () => {
      const expected: Array<[base: () => string, path: string, status: number, tags: string[]]> = [
        [() => front.url, '/api/blog', 200, ['posts']],
        [() => front.url, '/api/blog?limit=1&fields=title', 200, ['posts']],
        [() => streaming.url, '/api/blog', 200, ['posts']],
        [() => streaming.url, '/api/blog?tag=sql', 200, ['posts', 'tag-sql']],
        [() => posts.url, '/api/posts', 200, ['posts']],
        // Every tag of every tag filter, sorted, each one key (a space percent-encoded).
        [() => front.url, '/api/blog?tag=web%20dev,rust&tag_not=sql', 200, ['posts', 'tag-rust', 'tag-sql', 'tag-web%20dev']],
        [() => posts.url, '/api/posts?tag_all=web%20dev&tag=rust', 200, ['posts', 'tag-rust', 'tag-web%20dev']],
        [() => front.url, '/api/blog?tag=none', 404, ['posts', 'tag-none']],
        [() => posts.url, '/api/posts?tag=none', 200, ['posts', 'tag-none']],
        // A post's neighbour links follow the list order, which any change may move.
        [() => front.url, '/api/blog/one', 200, ['post-one', 'posts']],
        [() => front.url, '/api/blog/one?fields=title&formats=html', 200, ['post-one', 'posts']],
        [() => posts.url, '/api/post/two', 200, ['post-two', 'posts']],
        [() => front.url, '/api/blog/missing', 404, ['post-missing']],
        [() => posts.url, '/api/post/missing', 404, ['post-missing']],
        [() => front.url, '/api/tags', 200, ['posts']],
        [() => posts.url, '/api/posts/tags', 200, ['posts']],
        [() => front.url, '/feed.xml', 200, ['posts']],
        [() => front.url, '/feed.atom?tag=sql', 200, ['posts', 'tag-sql']],
        [() => front.url, '/feed.json?tag=web%20dev', 200, ['posts', 'tag-web%20dev']],
        [() => front.url, '/sitemap.xml', 200, ['posts']],
        [() => front.url, '/sitemap-9.xml', 404, ['posts']]
      ]
      for (const [base, path, status, tags] of expected) {
        const answer = await get(base(), path)
        assert.equal(answer.status, status, `${path}: ${answer.text}`)
        assert.deepEqual(tagsOf(answer), tags, path)
        // For CDNs, not for scripts: CORS does not expose them.
        assert.doesNotMatch(String(answer.headers['access-control-expose-headers'] ?? ''), /surrogate|cache-tag/i)
        const etag = answer.headers.etag
        if (status !== 200 || typeof etag !== 'string') continue
        const revalidated = await get(base(), path, { 'if-none-match': etag })
        assert.equal(revalidated.status, 304, path)
        assert.deepEqual(tagsOf(revalidated), tags, `${path}, 304`)
      }
    })

    test('answers that depend on nothing stored name nothing', async () => {
      for (const [base, path] of [[front.url, '/api/blog/Not_A_Slug'], [front.url, '/api/blog?limit=0'], [front.url, '/healthz'], [front.url, '/openapi.json'], [front.url, '/nowhere'], [posts.url, '/api/posts?tags=x']] as const) {
        const answer = await get(base, path)
        assert.equal(tagsOf(answer), undefined, `${path} (${answer.status})`)
      }
    })

    test('a tag filter of long tags stays one header within the budget, and the front still answers', async () => {
      // 20 tags of 100 characters, each some 600 bytes percent-encoded: the request fits in 16 KiB, the keys would not fit in 2.
      const long = (n: number): string => `${String(n).padStart(2, '0')}${'é'.repeat(98)}`
      const query = `?tag=${encodeURIComponent(Array.from({ length: 20 }, (_, n) => long(n)).join(','))}`
      for (const [base, path, status] of [[front.url, '/api/blog', 404], [posts.url, '/api/posts', 200]] as const) {
        const answer = await get(base, path + query)
        assert.equal(answer.status, status, answer.text)
        const keys = tagsOf(answer) ?? []
        assert.equal(keys[0], 'posts')
        assert.ok(keys.length > 1 && keys.length < 21, `${keys.length} keys`)
        assert.ok(String(answer.headers['surrogate-key']).length <= MAX_TAG_HEADER_BYTES)
        assert.equal(decodeURIComponent(keys[1]?.slice('tag-'.length) ?? ''), long(0), 'the first tags, whole')
      }
    })

    test('after a commit, every answer whose body or links changed names a tag the change purges', async () => {
      const paths = ['/api/blog', '/api/blog?tag=sql', '/api/blog?tag=rust', '/api/blog/one', '/api/blog/two', '/api/blog/three', '/api/tags', '/feed.xml', '/feed.json?tag=sql', '/sitemap.xml']
      const before = new Map<string, TestResponse>()
      for (const path of paths) before.set(path, await get(front.url, path))
      await database.exec('UPDATE posts SET title = \'Two, again\', tags = \'["sql", "rust"]\' WHERE slug = \'two\'')
      const purged = new Set(changeCacheTags({ since: 's', until: 'u', upserted: ['two'], deleted: [] }))
      const changed: string[] = []
      for (const path of paths) {
        const now = await get(front.url, path)
        if (now.text === before.get(path)?.text && now.headers.link === before.get(path)?.headers.link) continue
        changed.push(path)
        assert.ok((tagsOf(now) ?? []).some((tag) => purged.has(tag)), `${path} changed but names none of ${[...purged].join(' ')}`)
        assert.ok((tagsOf(before.get(path)!) ?? []).some((tag) => purged.has(tag)), `${path}: the copy a CDN held is purged`)
      }
      for (const path of ['/api/blog', '/api/blog?tag=sql', '/api/blog?tag=rust', '/api/blog/two', '/api/tags', '/feed.xml', '/feed.json?tag=sql']) assert.ok(changed.includes(path), path)
      // Another post's body stays as it was; its copies are purged with `posts` all the same, as its links may have moved.
      for (const path of ['/api/blog/one', '/api/blog/three']) assert.equal((await get(front.url, path)).text, before.get(path)?.text, path)
    })
  })
}

test('headers are made once per held body, and not at all without header names', () => {
  assert.equal(createCacheTagHeaders([]), undefined)
  const tags = createCacheTagHeaders(['Surrogate-Key', 'Cache-Tag'])!
  const held = {}
  assert.equal(tags.post('a', held), tags.post('a', held))
  const served = {}
  assert.equal(tags.servedPost('a', served), tags.servedPost('a', served))
  assert.deepEqual(tags.servedPost('a', {}), { 'Surrogate-Key': 'post-a posts', 'Cache-Tag': 'post-a,posts' })
  assert.notEqual(tags.post('a'), tags.post('a'))
  assert.equal(tags.list({ tag: ['x'] }, held), tags.list({ tag: ['x'] }, held))
  assert.equal(tags.list({}), tags.posts)
  assert.deepEqual(tags.list({ tag: ['b', 'a'], tagNot: ['a'] }), { 'Surrogate-Key': 'posts tag-a tag-b', 'Cache-Tag': 'posts,tag-a,tag-b' })
})

test('headers as a list are their names lower-cased and their values, made once per object; a 404\'s list is its headers\'', () => {
  fc.assert(fc.property(
    fc.uniqueArray(fc.constantFrom('Surrogate-Key', 'Cache-Tag', 'Edge-Cache-Tag', 'xkey', 'X-Tags'), { minLength: 1 }),
    fc.string(),
    (names, slug) => {
      const tags = createCacheTagHeaders(names)!
      const served = tags.servedPost(slug, {})
      assert.deepEqual(tags.listOf(served), Object.entries(served).flatMap(([name, value]) => [name.toLowerCase(), value]))
      assert.equal(tags.listOf(served), tags.listOf(served))
      assert.deepEqual(tags.postHeaderList(slug), tags.listOf(tags.post(slug)))
    }
  ))
})

cacheTagSuite('SQLite', sqliteServer)
cacheTagSuite('PostgreSQL', postgresServer)

describe('CACHE_TAG_HEADERS', () => {
  let database: TestDatabase
  let store: PostStore
  const apps: RunningApp[] = []
  before(async () => {
    database = await sqliteServer.create()
    const writer = await openTestStore(database.location, { writable: true })
    await writer.migrate()
    await writer.seed()
    await writer.close()
    store = await openTestStore(database.location)
    await store.checkSchema()
  })
  after(async () => {
    for (const app of apps) await app.app.close()
    await store?.close()
    await database?.drop()
  })

  async function tiersWith (value: string): Promise<[RunningApp, RunningApp]> {
    const config = testConfig({ CACHE_TAG_HEADERS: value })
    const posts = await listen(buildPostsApp(postsAppOptions(config, { store, logger: silentLogger })))
    apps.push(posts)
    const front = await startFront(new URL(posts.url), { cacheTagHeaders: config.cacheTagHeaders })
    apps.push(front)
    return [front, posts]
  }

  test('names other headers (each with its separator), or none when off or empty', async () => {
    const [front, posts] = await tiersWith('xkey,Edge-Cache-Tag')
    for (const [base, path] of [[front.url, '/api/blog?tag=a,b'], [posts.url, '/api/posts?tag=a,b']] as const) {
      const answer = await get(base, path)
      assert.equal(answer.headers.xkey, 'posts tag-a tag-b')
      assert.equal(answer.headers['edge-cache-tag'], 'posts,tag-a,tag-b')
      assert.equal(tagsOf(answer), undefined)
    }
    for (const value of ['off', '']) {
      const [quiet, quietPosts] = await tiersWith(value)
      for (const [base, path] of [[quiet.url, '/api/blog'], [quiet.url, '/api/blog/hello-world'], [quiet.url, '/api/blog/missing'], [quietPosts.url, '/api/posts'], [quietPosts.url, '/api/post/hello-world']] as const) {
        const answer = await get(base, path)
        assert.ok(answer.status === 200 || answer.status === 404, path)
        assert.deepEqual(Object.keys(answer.headers).filter((header) => /surrogate|cache-tag|xkey/.test(header)), [], `${JSON.stringify(value)}: ${path}`)
      }
    }
  })
})
