// What docs/api.md ("Paging") promises of a walk through pages while the table changes, on every
// store and through both tiers: a post whose sort key stays the same is served exactly once;
// a post whose `published_at` changes mid-walk may be served twice (moved behind the cursor) or
// not at all (moved ahead of it). SQLite always; PostgreSQL and MySQL when their test servers
// are set (mandatory in CI).
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { mysqlServer, openTestStore, postgresServer, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startTiersOn, type Tiers } from '../helpers/tiers.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const ROUTES = { posts: '/api/posts', front: '/api/blog' } as const
type Tier = keyof typeof ROUTES

/** p1 newest to p6 oldest, a day apart. */
const POSTS = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6']
const day = (n: number): string => `2024-05-${String(n).padStart(2, '0')}T00:00:00.000Z`

/** Pages of 2 from the first, following each `next` link; `between` runs after the first page. */
async function walk (tiers: Tiers, tier: Tier, between: () => Promise<void>): Promise<string[]> {
  const slugs: string[] = []
  let path: string | undefined = `${ROUTES[tier]}?limit=2`
  for (let page = 0; path !== undefined; page++) {
    const response = await get(tiers[tier].url, path)
    assert.equal(response.status, 200, `${path}: ${response.text}`)
    slugs.push(...(response.json() as Array<{ slug: string }>).map((post) => post.slug))
    path = /^<([^<>]+)>; rel="next"$/.exec(String(response.headers.link ?? ''))?.[1]
    if (page === 0) await between()
    assert.ok(page < 10, 'the walk ends')
  }
  return slugs
}

function describeMovedPostWalk (name: string, server: TestServer, timestamp: (iso: string) => string): void {
  describeOrSkip(`${name}: a walk while a post's sort key changes`, { skip: server.skip }, () => {
    let db: TestDatabase
    let tiers: Tiers
    before(async () => {
      db = await server.create()
      const writer = await openTestStore(db.location, { writable: true })
      await writer.migrate()
      await writer.close()
      tiers = await startTiersOn(db)
    })
    after(async () => {
      await tiers?.close()
      await db?.drop()
    })

    async function reset (): Promise<void> {
      await db.exec('DELETE FROM posts')
      for (const [i, slug] of POSTS.entries()) {
        await db.exec(`INSERT INTO posts (slug, title, content, published_at) VALUES ('${slug}', '${slug}', '', ${timestamp(day(10 - i))})`)
      }
    }
    const move = async (slug: string, iso: string): Promise<void> => { await db.exec(`UPDATE posts SET published_at = ${timestamp(iso)} WHERE slug = '${slug}'`) }

    for (const tier of ['posts', 'front'] as const) {
      test(`${tier}: a post served already and then dated older than the cursor is served again; the others once each`, async () => {
        await reset()
        const slugs = await walk(tiers, tier, async () => { await move('p1', day(1)) })
        assert.deepEqual(slugs, ['p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p1'])
      })

      test(`${tier}: a post not served yet and then dated newer than the cursor is never served; the others once each`, async () => {
        await reset()
        const slugs = await walk(tiers, tier, async () => { await move('p5', day(20)) })
        assert.deepEqual(slugs, ['p1', 'p2', 'p3', 'p4', 'p6'])
      })

      test(`${tier}: posts added or deleted mid-walk move no other post`, async () => {
        await reset()
        const slugs = await walk(tiers, tier, async () => {
          await db.exec(`INSERT INTO posts (slug, title, content, published_at) VALUES ('p0', 'p0', '', ${timestamp(day(20))})`)
          await db.exec("DELETE FROM posts WHERE slug = 'p4'")
        })
        assert.deepEqual(slugs, ['p1', 'p2', 'p3', 'p5', 'p6'])
      })
    }
  })
}

describeMovedPostWalk('SQLite', sqliteServer, (iso) => `'${iso}'`)
describeMovedPostWalk('PostgreSQL', postgresServer, (iso) => `'${iso}'`)
describeMovedPostWalk('MySQL', mysqlServer, (iso) => `'${iso.slice(0, 23).replace('T', ' ')}'`)
