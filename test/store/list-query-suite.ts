// What the tests of the list queries on every store share (list-query-contract.ts and the files
// it takes in): the posts they page through, the suite's database and ways to serve it, and a
// walk through a list's pages by their next links.
import assert from 'node:assert/strict'
import { after, before, beforeEach } from 'node:test'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get, type TestResponse } from '../helpers/http.js'
import { withTiers, type Tiers } from '../helpers/tiers.js'

export interface ListQueryFixture {
  /** SQL literal of a timestamp in this store's default table (`published_at`). */
  timestamp: (iso: string) => string
  /**
   * A `tags` column type other than the default table's (PostgreSQL json, MySQL/SQLite text), and
   * whether it takes text that is not JSON.
   */
  tagsColumn: { type: string, anyText: boolean }
}

export const ROUTES = { front: '/api/blog', posts: '/api/posts' } as const
export type Tier = keyof typeof ROUTES

/** Posts of the default table: ties on a date, undated ones, and two dates a microsecond apart (distinct on PostgreSQL only). */
export const DATED: ReadonlyArray<readonly [string, string | null]> = [
  ['newest', '2024-05-01T00:00:00Z'],
  ['alpha', '2024-03-01T00:00:00Z'], ['Zed', '2024-03-01T00:00:00Z'], ['a1', '2024-03-01T00:00:00Z'], ['a-b', '2024-03-01T00:00:00Z'],
  ['micro-late', '2024-02-01T00:00:00.000200Z'], ['micro-early', '2024-02-01T00:00:00.000100Z'],
  ['oldest', '2024-01-01T00:00:00Z'],
  ['draft-b', null], ['draft-c', null], ['draft-a', null]
]

export const slugsOf = (response: TestResponse): string[] => (response.json() as Array<{ slug: string }>).map((p) => p.slug)

/** The target of a `rel="next"` Link, checked to be a relative reference to the same route, with `limit` and `after` first. */
export function nextTarget (response: TestResponse, route: string, limit: number): string | undefined {
  const link = response.headers.link
  if (link === undefined) return undefined
  const match = /^<([^<>]+)>; rel="next"$/.exec(String(link))
  assert.ok(match !== null, `a Link of the expected form: ${String(link)}`)
  const target = match[1] ?? ''
  assert.ok(target.startsWith(`${route}?limit=${limit}&after=`), target)
  return target
}

/** Follows `next` links from `?<search>` to the end; every page holds at most `limit` posts. */
export async function walk (tiers: Tiers, tier: Tier, search: string, limit: number): Promise<{ slugs: string[], pages: number }> {
  const base = tiers[tier].url
  let target: string | undefined = `${ROUTES[tier]}?${search}`
  const slugs: string[] = []
  let pages = 0
  while (target !== undefined) {
    const response = await get(base, target)
    assert.equal(response.status, 200, `${target}: ${response.text}`)
    const page = slugsOf(response)
    assert.ok(page.length >= 1 && page.length <= limit, `${target}: ${page.length} posts`)
    slugs.push(...page)
    pages++
    assert.ok(pages <= 100, 'the walk ends')
    target = nextTarget(response, ROUTES[tier], limit)
  }
  return { slugs, pages }
}

export type Row = readonly [slug: string, publishedAt: string | null, tags?: readonly string[]]

export interface ListQuerySuite {
  readonly fixture: ListQueryFixture
  /** The suite's database: created before its tests, without a `posts` table before each. */
  readonly db: () => TestDatabase
  /** The SQL inserting a post of the default table. */
  readonly insert: (slug: string, publishedAt: string | null, tags?: readonly string[]) => string
  /** A store on the table as it is, its schema checked. */
  readonly serving: () => Promise<PostStore>
  /** Runs `run` against both tiers serving the default table, which `migrate` creates, holding `rows`. */
  readonly withDefaultTable: (rows: readonly Row[], run: (tiers: Tiers) => Promise<void>) => Promise<void>
  /** Runs `run` against both tiers serving `store`, then closes them. */
  readonly withTiers: (store: PostStore, run: (tiers: Tiers) => Promise<void>) => Promise<void>
}

/** Declares the suite's database hooks in the describe that calls it, and returns what its tests share. */
export function useListQuerySuite (server: TestServer, fixture: ListQueryFixture): ListQuerySuite {
  let db: TestDatabase

  before(async () => { db = await server.create() })
  after(async () => { await db?.drop() })
  beforeEach(async () => { await db.exec('DROP TABLE IF EXISTS posts') })

  const insert = (slug: string, publishedAt: string | null, tags: readonly string[] = []): string =>
    `INSERT INTO posts (slug, title, content, tags, published_at) VALUES ('${slug}', 'Title of ${slug}', '# ${slug}', '${JSON.stringify(tags)}', ` +
    `${publishedAt === null ? 'NULL' : fixture.timestamp(publishedAt)})`

  async function serving (): Promise<PostStore> {
    const store = await openTestStore(db.location)
    await store.checkSchema()
    return store
  }

  async function withDefaultTable (rows: readonly Row[], run: (tiers: Tiers) => Promise<void>): Promise<void> {
    const writer = await openTestStore(db.location, { writable: true })
    await writer.migrate()
    await writer.close()
    for (const [slug, at, tags] of rows) await db.exec(insert(slug, at, tags))
    await withTiers(await serving(), run)
  }

  return { fixture, db: () => db, insert, serving, withDefaultTable, withTiers }
}
