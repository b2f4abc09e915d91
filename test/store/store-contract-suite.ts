// What the tests of the store contract share (store-contract.ts and the files it takes in): the
// suite's database on the store under test, and the ways its tests open and serve it.
import { after, before, beforeEach } from 'node:test'
import type { Config } from '../../src/config.js'
import type { PostStore } from '../../src/store/store.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { withTiers, type Tiers } from '../helpers/tiers.js'
import type { ListQueryFixture } from './list-query-suite.js'

export interface StoreFixture extends ListQueryFixture {
  /** A `posts` table with timestamp, boolean, JSON, NULL, big-integer and binary columns, and its rows. */
  normalisationTable: string[]
  /** What the upstream must serve for slug `first-post` of that table. */
  expectedFirstPost: Record<string, unknown>
}

export interface StoreContractSuite {
  /** The store's name, as the suite's title gives it. */
  readonly name: string
  readonly fixture: StoreFixture
  /** What every store of the suite is opened with. */
  readonly config: Config
  /** The suite's database: created before its tests, without a `posts` table before each. */
  readonly db: () => TestDatabase
  /** A store on the default table, which `migrate` creates, ready to serve. */
  readonly migratedStore: () => Promise<PostStore>
  /** A store on the table as it is, its schema checked. */
  readonly servingStore: () => Promise<PostStore>
  /** Runs `run` against both tiers serving `store`, then closes them. */
  readonly withTiers: (store: PostStore, run: (tiers: Tiers) => Promise<void>) => Promise<void>
  /** The SQL inserting a post of the default table. */
  readonly insert: (slug: string, publishedAt: string | null, title?: string) => string
}

/** Declares the suite's database hooks in the describe that calls it, and returns what its tests share. */
export function useStoreContractSuite (name: string, server: TestServer, fixture: StoreFixture, config: Config): StoreContractSuite {
  let db: TestDatabase

  before(async () => { db = await server.create() })
  after(async () => { await db?.drop() })
  beforeEach(async () => { await db.exec('DROP TABLE IF EXISTS posts') })

  async function migratedStore (): Promise<PostStore> {
    const writer = await openTestStore(db.location, { writable: true, config })
    await writer.migrate()
    await writer.close()
    return await servingStore()
  }

  async function servingStore (): Promise<PostStore> {
    const store = await openTestStore(db.location, { config })
    await store.checkSchema()
    return store
  }

  const insert = (slug: string, publishedAt: string | null, title = slug): string =>
    `INSERT INTO posts (slug, title, content, published_at) VALUES ('${slug}', '${title}', '# ${title}', ${publishedAt === null ? 'NULL' : fixture.timestamp(publishedAt)})`

  return { name, fixture, config, db: () => db, migratedStore, servingStore, withTiers, insert }
}
