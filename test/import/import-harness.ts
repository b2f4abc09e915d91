// What the import suites share: the fixtures' folder, the tables a store is given, and per suite a
// test database and a work folder made afresh for each test, with `blog-read-api import` run
// through its command line in this process, and the reads that check what it wrote.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, beforeEach } from 'node:test'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { StoreLocation } from '../../src/config.js'
import type { Post, PostStore } from '../../src/store/store.js'
import { runCliHere, type CliResult } from '../helpers/cli.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'

export const FIXTURES = fileURLToPath(new URL('../fixtures/import/', import.meta.url))

export interface ImportFixture {
  /**
   * An operator's table without `tags` or `updated_at`, with a text, a boolean and a JSON column
   * for other front-matter keys, and a CHECK refusing titles over 20 characters.
   */
  operatorTable: string
  /**
   * A team's own table, as a user had it: the body in `body_html` (NOT NULL), a NOT NULL
   * `summary` with a default, tags in the store's own shape, a `status` column, a NOT NULL `lang` without a default, `minutes`, and on
   * servers that type columns, a `title` of at most 20 characters and an integer `minutes`.
   */
  teamTable: string
  /** Files of the `team` fixture this store refuses, beyond `team/no-lang.md` (which all do), with the reason. */
  teamRefusals: RegExp[]
}

const databaseUrl = (location: StoreLocation): string => location.dialect === 'sqlite' ? location.filename : location.url

/** The summary line: the last line of stdout. */
export const summary = (result: CliResult): string => result.stdout.trimEnd().split('\n').at(-1) ?? ''

/** Report lines on stderr, without the progress lines. */
export const reportLines = (result: CliResult): string[] =>
  result.stderr.split('\n').filter((line) => line !== '' && !/^(writing|comparing): \d+\/\d+ files done$/.test(line))

/** Each line matches exactly one pattern, and each pattern one line. */
export function assertLines (lines: string[], patterns: RegExp[]): void {
  assert.equal(lines.length, patterns.length, `expected ${patterns.length} lines, got:\n${lines.join('\n')}`)
  for (const pattern of patterns) {
    assert.equal(lines.filter((line) => pattern.test(line)).length, 1, `one line matching ${pattern} in:\n${lines.join('\n')}`)
  }
}

export interface ImportHarness {
  /** This suite's database (its `posts` table dropped before each test). */
  readonly db: TestDatabase
  /** A folder of this test's own. */
  readonly work: string
  importCli: (args: string[], cwd?: string) => Promise<CliResult>
  migrate: () => Promise<void>
  posts: () => Promise<Post[]>
  watchChanges: () => Promise<{ token: () => Promise<string | undefined>, close: () => Promise<void> }>
  bySlug: (list: Post[]) => Map<string, Post>
  copyBlog: () => string
}

/** The harness of the suite being described: call it in its `describe`, which its hooks join. */
export function createImportHarness (server: TestServer): ImportHarness {
  let db: TestDatabase
  let work: string

  before(async () => { db = await server.create() })
  after(async () => { await db?.drop() })
  beforeEach(async () => {
    await db.exec('DROP TABLE IF EXISTS posts')
    work = mkdtempSync(join(tmpdir(), 'blog-read-api-import-'))
  })

  // In this process (a spawn per case would cost a second each; import-cli.test.ts runs the
  // built executable end to end), from `cwd` as a user's shell would be: the command reads
  // and reports paths relative to it.
  const cli = async (args: string[], cwd = FIXTURES): Promise<CliResult> => {
    const from = process.cwd()
    process.chdir(cwd)
    try {
      return await runCliHere(args, { DATABASE_URL: databaseUrl(db.location) })
    } finally {
      process.chdir(from)
    }
  }
  const importCli = async (args: string[], cwd = FIXTURES): Promise<CliResult> => await cli(['import', ...args], cwd)

  async function migrate (): Promise<void> {
    const result = await cli(['migrate'])
    assert.equal(result.code, 0, result.stderr)
  }

  async function withStore<T> (use: (store: PostStore) => Promise<T>): Promise<T> {
    const store = await openTestStore(db.location)
    try {
      await store.checkSchema()
      return await use(store)
    } finally {
      await store.close()
    }
  }

  const posts = async (): Promise<Post[]> => await withStore(async (store) => {
    const list: Post[] = []
    for await (const batch of store.streamPosts()) list.push(...batch)
    return list
  })

  /**
   * What tells whether the import wrote: the change token as the post API reads it, from one
   * connection kept open; undefined on MySQL. PostgreSQL's token moves with any transaction on
   * the server (other tests' too), so there it is each row's xmin, the transaction that wrote it.
   */
  async function watchChanges (): Promise<{ token: () => Promise<string | undefined>, close: () => Promise<void> }> {
    const store = await openTestStore(db.location)
    await store.checkSchema()
    const token = async (): Promise<string | undefined> => {
      if (db.location.dialect !== 'postgres') return await store.readChangeToken()
      const client = new pg.Client({ connectionString: db.location.url })
      await client.connect()
      try {
        return JSON.stringify((await client.query('SELECT slug, xmin::text FROM posts ORDER BY slug')).rows)
      } finally {
        await client.end()
      }
    }
    return { token, close: async () => await store.close() }
  }
  const bySlug = (list: Post[]): Map<string, Post> => new Map(list.map((p) => [p.slug, p]))

  /** A copy of the fixtures' good posts, to edit. */
  function copyBlog (): string {
    cpSync(join(FIXTURES, 'blog'), join(work, 'blog'), { recursive: true, verbatimSymlinks: true })
    return join(work, 'blog')
  }

  return {
    get db () { return db },
    get work () { return work },
    importCli,
    migrate,
    posts,
    watchChanges,
    bySlug,
    copyBlog
  }
}
