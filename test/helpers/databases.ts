// Real databases for store tests: a fresh SQLite file, or a fresh database on the PostgreSQL or
// MySQL/MariaDB server named by TEST_POSTGRES_URL / TEST_MYSQL_URL. In CI those are mandatory.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { createConnection } from 'mysql2/promise'
import pg from 'pg'
import type { Config, StoreLocation } from '../../src/config.js'
import { openStore } from '../../src/store/open-store.js'
import type { PostStore } from '../../src/store/store.js'
import type { PublishingOptions } from '../../src/publishing/publishing-options.js'
import { testConfig } from './config.js'

export interface TestDatabase {
  location: StoreLocation
  /** Runs SQL as an editor of the blog would, on its own connection (auto-commit). */
  exec: (statement: string) => Promise<void>
  /** Runs SQL on the server's administrative connection (outside this database). */
  admin: (statement: string) => Promise<unknown[]>
  /** The database's name on its server. */
  name: string
  drop: () => Promise<void>
}

/** Opens a store as the CLI does: read-only unless `writable`, with `config`'s pool limits (default: the settings table's). */
export async function openTestStore (location: StoreLocation, { writable = false, config = testConfig(), publishing }: { writable?: boolean, config?: Config, publishing?: PublishingOptions } = {}): Promise<PostStore> {
  return await openStore(location, { writable, onPoolError: () => {}, limits: config.storeLimits, publishing })
}

/** Migrates `location` (the default table) and inserts the sample posts. */
export async function seedTestStore (location: StoreLocation): Promise<void> {
  const writer = await openTestStore(location, { writable: true })
  try {
    await writer.migrate()
    await writer.seed()
  } finally {
    await writer.close()
  }
}

/** A fresh SQLite database with the default table and the sample posts. */
export async function createSeededSqlite (): Promise<TestDatabase> {
  const database = await sqliteServer.create()
  await seedTestStore(database.location)
  return database
}

export interface TestServer {
  /** Why the suite cannot run here; in CI this fails instead of skipping. */
  skip: string | false
  create: () => Promise<TestDatabase>
}

/** `example`: a URL that names the server this machine is expected to run, for the skip reason. */
function serverFromEnv (variable: string, example: string, create: (url: string) => Promise<TestDatabase>): TestServer {
  const url = process.env[variable]
  if (url !== undefined && url !== '') return { skip: false, create: async () => await create(url) }
  if (process.env.CI === 'true') {
    return { skip: false, create: async () => { throw new Error(`${variable} must be set in CI: this suite is mandatory there`) } }
  }
  return { skip: `${variable} is not set (set it, e.g. ${variable}=${example})`, create: async () => { throw new Error('unreachable') } }
}

const uniqueName = (): string => `blogtest_${randomBytes(6).toString('hex')}`

export const sqliteServer: TestServer = {
  skip: false,
  create: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-'))
    const filename = join(dir, 'blog.db')
    const editor = new Database(filename)
    editor.pragma('journal_mode = WAL')
    return {
      location: { dialect: 'sqlite', filename },
      exec: async (statement) => { editor.exec(statement) },
      admin: async () => { throw new Error('SQLite has no server') },
      name: filename,
      drop: async () => {
        editor.close()
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}

/** A fresh database on the PostgreSQL server of `adminUrl` (a superuser's), as the suites use. */
export async function createPostgresDatabase (adminUrl: string): Promise<TestDatabase> {
  const name = uniqueName()
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  // A linguistic collation, as most production databases have (en_US sorts `Zed` after `alpha`):
  // the store must still order slugs by bytes and match them exactly.
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const editor = new pg.Client({ connectionString: url.href })
  await editor.connect()
  return {
    location: { dialect: 'postgres', url: url.href },
    exec: async (statement) => { await editor.query(statement) },
    admin: async (statement) => (await admin.query(statement)).rows,
    name,
    drop: async () => {
      await editor.end()
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
}

export const postgresServer: TestServer = serverFromEnv('TEST_POSTGRES_URL', 'postgres://postgres@127.0.0.1:5432/test', createPostgresDatabase)

export const mysqlServer: TestServer = serverFromEnv('TEST_MYSQL_URL', 'mysql://root@127.0.0.1:3306/test', async (adminUrl) => {
  const name = uniqueName()
  const admin = await createConnection({ uri: adminUrl })
  await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const editor = await createConnection({ uri: url.href, multipleStatements: true })
  // The editor writes TIMESTAMP and DATETIME values as UTC wall-clock time.
  await editor.query("SET time_zone = '+00:00'")
  return {
    location: { dialect: 'mysql', url: url.href },
    exec: async (statement) => { await editor.query(statement) },
    admin: async (statement) => (await admin.query(statement))[0] as unknown[],
    name,
    drop: async () => {
      await editor.end()
      await admin.query(`DROP DATABASE IF EXISTS ${name}`)
      await admin.end()
    }
  }
})

/** Every store, each with the name its tests carry: `for (const [name, server] of SERVERS)`. */
export const SERVERS: ReadonlyArray<readonly [string, TestServer]> = [['SQLite', sqliteServer], ['PostgreSQL', postgresServer], ['MySQL/MariaDB', mysqlServer]]
