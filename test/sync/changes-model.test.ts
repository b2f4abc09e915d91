// Sync against a model, on every store: random writes by an editor's own connection (inserts,
// updates, writes that change nothing, deletes, renames, several in one transaction, truncates);
// after each, a client that applies `changes?since=` to its copy holds exactly the current list,
// through the post API and through the front, and two post API processes name the state alike.
// Under PUBLISHED_ONLY, publishing, unpublishing and a scheduled instant passing (the clock moves,
// nothing is written) are changes too.
import assert from 'node:assert/strict'
import { test, type TestContext } from 'node:test'
import fc from 'fast-check'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import type { Post, PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, SERVERS, seedTestStore, type TestDatabase } from '../helpers/databases.js'
import { listen, silentLogger, startTiers } from '../helpers/tiers.js'
import { assertProblem } from '../helpers/problem.js'
import { get } from '../helpers/http.js'

const SLUGS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon']
const TITLES = ['One', 'Two', 'Three']

const NOW = Date.parse('2026-03-01T12:00:00Z')
const MINUTE = 60_000

type Write =
  | { kind: 'insert' | 'update' | 'touch' | 'delete', slug: number, title: number }
  | { kind: 'rename', slug: number, to: number }
  /** published_at a minute before the clock, none, or a minute after it. */
  | { kind: 'publish' | 'unpublish' | 'schedule', slug: number }
type Step = Write | { kind: 'transaction', writes: Write[] } | { kind: 'truncate' } | { kind: 'tick' }

const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({ kind: fc.constantFrom('insert' as const, 'update' as const, 'touch' as const, 'delete' as const), slug: fc.nat(SLUGS.length - 1), title: fc.nat(TITLES.length - 1) }),
  fc.record({ kind: fc.constant('rename' as const), slug: fc.nat(SLUGS.length - 1), to: fc.nat(SLUGS.length - 1) }),
  fc.record({ kind: fc.constantFrom('publish' as const, 'unpublish' as const, 'schedule' as const), slug: fc.nat(SLUGS.length - 1) })
)
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: write },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('transaction' as const), writes: fc.array(write, { minLength: 2, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'truncate' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'tick' as const }) }
)

/** An instant as the default table's `published_at` takes it. */
function timestamp (dialect: string, ms: number): string {
  const iso = new Date(ms).toISOString()
  return dialect === 'mysql' ? `'${iso.slice(0, 23).replace('T', ' ')}'` : `'${iso}'`
}

/** The SQL of `w` against the slugs present (tracked here as the editor writes), or undefined when it cannot apply. */
function sqlOf (w: Write, present: Set<string>, dialect: string, now: number): string | undefined {
  const slug = SLUGS[w.slug] as string
  if (w.kind === 'insert') {
    if (present.has(slug)) return undefined
    present.add(slug)
    return `INSERT INTO posts (slug, title, content, tags, published_at) VALUES ('${slug}', '${TITLES[w.title]}', 'Body of ${slug}', '[]', ${timestamp(dialect, now - MINUTE)})`
  }
  if (!present.has(slug)) return undefined
  switch (w.kind) {
    case 'publish': return `UPDATE posts SET published_at = ${timestamp(dialect, now - MINUTE)} WHERE slug = '${slug}'`
    case 'unpublish': return `UPDATE posts SET published_at = NULL WHERE slug = '${slug}'`
    case 'schedule': return `UPDATE posts SET published_at = ${timestamp(dialect, now + MINUTE)} WHERE slug = '${slug}'`
    case 'update': return `UPDATE posts SET title = '${TITLES[w.title]}' WHERE slug = '${slug}'`
    case 'touch': return `UPDATE posts SET title = title WHERE slug = '${slug}'`
    case 'delete':
      present.delete(slug)
      return `DELETE FROM posts WHERE slug = '${slug}'`
    case 'rename': {
      const to = SLUGS[w.to] as string
      if (present.has(to)) return undefined
      present.delete(slug)
      present.add(to)
      return `UPDATE posts SET slug = '${to}' WHERE slug = '${slug}'`
    }
  }
}

function statementOf (s: Step, present: Set<string>, dialect: string, now: number): string | undefined {
  if (s.kind === 'tick') return undefined
  if (s.kind === 'truncate') {
    present.clear()
    return dialect === 'sqlite' ? 'DELETE FROM posts' : 'TRUNCATE TABLE posts'
  }
  if (s.kind !== 'transaction') return sqlOf(s, present, dialect, now)
  const statements = s.writes.map((w) => sqlOf(w, present, dialect, now)).filter((sql) => sql !== undefined)
  return statements.length === 0 ? undefined : `BEGIN; ${statements.join('; ')}; COMMIT`
}

async function getJson (url: string): Promise<{ status: number, body: any }> {
  const response = await fetch(url)
  return { status: response.status, body: await response.json() }
}

interface Copy { token: string, posts: Map<string, Post> }

async function fullCopy (changesUrl: string): Promise<Copy> {
  const { status, body } = await getJson(changesUrl)
  assert.equal(status, 200)
  assert.deepEqual(body.deleted, [])
  return { token: body.until, posts: new Map(body.upserted.map((post: Post) => [post.slug, post])) }
}

async function applyChanges (copy: Copy, changesUrl: string): Promise<void> {
  const { status, body } = await getJson(`${changesUrl}?since=${copy.token}`)
  assert.equal(status, 200, JSON.stringify(body))
  assert.equal(body.since, copy.token)
  for (const slug of body.deleted) copy.posts.delete(slug)
  for (const post of body.upserted) copy.posts.set(post.slug, post)
  copy.token = body.until
}

const bySlug = (posts: Iterable<Post>): Post[] => [...posts].sort((a, b) => a.slug < b.slug ? -1 : 1)

async function modelTest (t: TestContext, database: TestDatabase, publishedOnly: boolean): Promise<void> {
  const { dialect } = database.location
  let clock = NOW
  const now = (): number => clock
  await seedTestStore(database.location)
  const open = async (): Promise<PostStore> => {
    const store = await openTestStore(database.location, { publishing: { publishedOnly, now } })
    await store.checkSchema()
    return store
  }
  const tiers = await startTiers(await open(), { now })
  t.after(() => tiers.close())
  // A second post API process over the same store.
  const otherStore = await open()
  const other = await listen(buildPostsApp(postsAppOptions(testConfig(), { store: otherStore, logger: silentLogger, now })))
  t.after(async () => { await other.app.close(); await otherStore.close() })
  const postsChanges = `${tiers.posts.url}/api/posts/changes`
  const frontChanges = `${tiers.front.url}/api/changes`

  await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 10 }), async (steps) => {
    await database.exec('DELETE FROM posts')
    clock = NOW
    const present = new Set<string>()
    const copies = [await fullCopy(postsChanges), await fullCopy(frontChanges)]
    for (const s of steps) {
      const statement = statementOf(s, present, dialect, clock)
      if (statement !== undefined) await database.exec(statement)
      if (s.kind === 'tick') clock += MINUTE
      const { body: list } = await getJson(`${tiers.posts.url}/api/posts`)
      await applyChanges(copies[0] as Copy, postsChanges)
      await applyChanges(copies[1] as Copy, frontChanges)
      for (const copy of copies) assert.deepEqual(bySlug(copy.posts.values()), bySlug(list))
      const whole = await fullCopy(postsChanges)
      assert.equal(whole.token, copies[0]?.token, 'a delta and the whole list name the same state')
      assert.equal((await fullCopy(`${other.url}/api/posts/changes`)).token, whole.token, 'two processes name a state alike')
    }
  }), {
    numRuns: dialect === 'sqlite' ? 20 : 8,
    // A scheduled post's instant passing, with no write.
    examples: [[[{ kind: 'insert', slug: 0, title: 0 }, { kind: 'schedule', slug: 0 }, { kind: 'tick' }]]]
  })

  // A token no process holds, at either tier: 410; a malformed one: 400.
  for (const [base, path] of [[tiers.posts.url, '/api/posts/changes'], [tiers.front.url, '/api/changes']] as const) {
    assertProblem(await get(base, `${path}?since=${'A'.repeat(22)}`), 'sync-expired')
    assertProblem(await get(base, `${path}?since=nope`), 'invalid-query')
  }
}

for (const [name, server] of SERVERS) {
  for (const publishedOnly of [false, true]) {
    test(`${name}${publishedOnly ? ', PUBLISHED_ONLY' : ''}: applying each delta to a copy gives the current list, at both tiers`, { skip: server.skip }, async (t) => {
      const database = await server.create()
      t.after(() => database.drop())
      await modelTest(t, database, publishedOnly)
    })
  }
}
