// SQLite through better-sqlite3: the embedded default. Its addon is built on Node-API and ships
// in the package, one binary for every Node line the project supports (docs/decisions.md).
import Database from 'better-sqlite3'
import { Kysely, SqliteDialect, sql, type SqliteDatabase } from 'kysely'
import { LRUCache } from 'lru-cache'
import type { PublishingOptions } from '../publishing/publishing-options.js'
import { KyselyPostStore } from './kysely-post-store.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import { changeTokenReader, installChangeCounter } from './sqlite-change-token.js'
import { tablesReadByPosts } from './sqlite-tables-read.js'
import { registerRowDigest, SQLITE_ROW_DIGEST } from './sqlite-row-digest.js'
import type { ColumnInfo, ColumnKind } from './store.js'

/** How long a read waits for a writer's lock before failing (then 503). */
const BUSY_TIMEOUT_MS = 2000

/**
 * SQLite has no JSON or boolean types: a column's declared type says how to read it. A view
 * reports BLOB for every column it does not type, so only a table's BLOB column is binary (a
 * view's bytes are still left out, by their value).
 */
function columnKind (declaredType: string, inTable: boolean): ColumnKind {
  const type = declaredType.toUpperCase()
  if (type.includes('JSON')) return 'json'
  if (type === 'BOOLEAN' || type === 'BOOL') return 'boolean'
  if (inTable && type.includes('BLOB')) return 'binary'
  return 'value'
}

/**
 * Result codes of an outage, extended ones included (SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_READ…):
 * locked by a writer beyond BUSY_TIMEOUT_MS, the file gone or unreadable, the disk full.
 */
const OUTAGE_CODES = /^SQLITE_(?:BUSY|LOCKED|CANTOPEN|IOERR|PROTOCOL|CORRUPT|NOTADB|FULL)(?:_|$)/
/** SQLITE_ERROR when the table or a column is gone. */
const MISSING_OBJECT = /^no such (?:table|column)\b/
/** better-sqlite3 checks this itself, before SQLite would answer SQLITE_CANTOPEN. */
const MISSING_DIRECTORY = 'Cannot open database because the directory does not exist'

function isUnavailable (err: Error): boolean {
  if (err instanceof Database.SqliteError) return OUTAGE_CODES.test(err.code) || MISSING_OBJECT.test(err.message)
  return err instanceof TypeError && err.message === MISSING_DIRECTORY
}

/** A bound of finer than milliseconds as whole milliseconds: `> b` keeps what `> floor(b)` does, `< b` what `< ceil(b)` does. */
function toMilliseconds (op: '>' | '<', instant: string): string {
  const m = /^(.{19})\.(\d{3})(\d*)Z$/.exec(instant)
  if (m === null || /^0*$/.test(m[3] ?? '')) return instant
  const floor = `${m[1] ?? ''}.${m[2] ?? ''}Z`
  return op === '>' ? floor : new Date(Date.parse(floor) + 1).toISOString()
}

function createSqliteSpec (database: Database.Database, filename: string): DialectSpec {
  const changeToken = changeTokenReader(database)
  registerRowDigest(database)
  return {
    dialect: 'sqlite',
    synchronous: true,
    isUnavailable,
    rowVersion: (columns) => sql<string>`${sql.raw(SQLITE_ROW_DIGEST)}(${sql.join(columns.map(({ name }) => sql.ref(name)))})`,
    async describeColumns (db) {
      const { rows } = await sql<{ name: string, type: string }>`PRAGMA table_info(posts)`.execute(db)
      const { rows: [object] } = await sql<{ type: string }>`SELECT type FROM sqlite_schema WHERE name = 'posts'`.execute(db)
      const inTable = object?.type === 'table'
      return rows.map((r): ColumnInfo => ({ name: r.name, kind: columnKind(r.type, inTable), type: r.type.toLowerCase() }))
    },
    // Values keep their type in the cursor, and any text compares with any column: no error to map.
    isInvalidKey: () => false,
    // SQLite sorts NULL lowest, so DESC already puts unpublished posts last.
    newestFirst: sql`published_at DESC`,
    // BINARY is the column's default collation, which the index uses.
    slugKey: () => sql`slug COLLATE BINARY`,
    // Read as stored: text stays text, integers and reals keep their value.
    exactKey: (column) => sql.ref(column),
    // BINARY compares the UTF-8 bytes: code point order, whatever the column's collation.
    codePointKey: ({ name }) => ({ key: sql`${sql.ref(name)} COLLATE BINARY`, exact: sql.ref(name) }),
    // Any column may hold JSON text; what is not a JSON array holds no tag (never an error).
    tagCondition: () => (tag) => sql<boolean>`EXISTS (SELECT 1 FROM json_each(CASE WHEN json_valid(tags) THEN
      CASE WHEN json_type(tags) = 'array' THEN tags END END) WHERE type = 'text' AND value = ${tag})`,
    // Any column may hold a date as text SQLite's date functions read (ISO 8601, with or without a
    // zone); anything else (a number, other text) has no instant and matches no window. Those
    // functions keep milliseconds: a finer bound becomes the millisecond that keeps the same rows.
    dateCondition: ({ name }) => (op, instant) =>
      sql<boolean>`julianday(CASE WHEN typeof(${sql.ref(name)}) = 'text' THEN ${sql.ref(name)} END) ${sql.raw(op)} julianday(${toMilliseconds(op, instant)})`,
    async createDefaultTable (db) {
      await sql`CREATE TABLE IF NOT EXISTS posts (
        id INTEGER PRIMARY KEY,
        slug TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL,
        summary TEXT,
        content TEXT NOT NULL DEFAULT '',
        author TEXT,
        tags JSON NOT NULL DEFAULT '[]',
        published_at TEXT,
        updated_at TEXT
      )`.execute(db)
      await sql`CREATE INDEX IF NOT EXISTS posts_newest_first ON posts (published_at DESC, slug)`.execute(db)
      installChangeCounter(database, ['posts'])
      changeToken.recheck()
    },
    async trackView () {
      const read = tablesReadByPosts(database)
      if (!('tables' in read)) return { kind: 'refused', reason: read.refused }
      installChangeCounter(database, read.tables)
      changeToken.recheck()
      return { kind: 'installed', tables: read.tables }
    },
    // SQLite text timestamps are served as stored, so store them as ISO 8601 UTC.
    timestampParameter: (date) => date.toISOString(),
    detectChangeTracking: async () => true,
    readChangeToken: async () => changeToken.read(),
    // better-sqlite3 allows no other statement on a connection while an iterator is open on it,
    // so a streamed list reads through a connection of its own (one statement: one snapshot).
    async * streamRows (query) {
      const reader = new Database(filename, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS })
      try {
        reader.defaultSafeIntegers(true)
        // One pass in index order gains nothing from a page cache: keep each stream's small.
        reader.pragma('cache_size = -256')
        // A versioned read selects each row's digest too.
        registerRowDigest(reader)
        const rows = reader.prepare(query.sql).iterate(...query.parameters) as IterableIterator<Record<string, unknown>>
        try {
          for (let batch = takeRows(rows); batch.length > 0; batch = takeRows(rows)) yield batch
        } finally {
          // A reader that stopped early (the client left, a list too large to hold) leaves the
          // statement running: it must end before its connection can close.
          rows.return?.()
        }
      } finally {
        reader.close()
      }
    }
  }
}

/**
 * Rows a streamed list reads at once: SQLite answers from memory without waiting, so each batch
 * is a pause of the event loop (64 posts of 4 KB: about half a millisecond).
 */
const STREAM_BATCH_ROWS = 64

function takeRows (rows: Iterator<Record<string, unknown>>): Array<Record<string, unknown>> {
  const batch: Array<Record<string, unknown>> = []
  while (batch.length < STREAM_BATCH_ROWS) {
    const next = rows.next()
    if (next.done === true) break
    batch.push(next.value)
  }
  return batch
}

/** Distinct statements kept prepared: each list query's shape (fields, tag, cursor) is one. */
const MAX_PREPARED = 100

/**
 * The database as Kysely sees it, with its statements kept prepared by SQL text: Kysely prepares
 * every query anew, which was a tenth of the post API's CPU per page read. Safe since
 * Kysely runs each statement to its end at once (all or run); the one statement that iterates
 * (a streamed list) is prepared on a connection of its own.
 */
function withPreparedStatements (database: Database.Database): SqliteDatabase {
  const prepared = new LRUCache<string, Database.Statement>({ max: MAX_PREPARED })
  return {
    close: () => database.close(),
    prepare (text) {
      let statement = prepared.get(text)
      if (statement === undefined) prepared.set(text, statement = database.prepare(text))
      return statement
    }
  }
}

/** The Node-API version better-sqlite3's addon asks for: Node 22.14 and later have it. */
const NODE_API_NEEDED = 10

/** Why this Node cannot load the SQLite binding (`napi`: its Node-API version), or undefined when it can. */
export function unsupportedNodeApi (napi: string | undefined, nodeVersion: string): string | undefined {
  if (Number(napi) >= NODE_API_NEEDED) return undefined
  return `SQLite needs Node.js 22.14 or newer (Node-API ${NODE_API_NEEDED}); this is Node.js ${nodeVersion}`
}

/**
 * Opens a SQLite file. Read-only unless `writable` (migrate, seed, or the fresh default file):
 * a database the user points to is never written to by serving.
 */
export function openSqliteStore (filename: string, { writable }: { writable: boolean }, publishing?: PublishingOptions): KyselyPostStore {
  // An older Node does not refuse the addon cleanly: it crashes loading it.
  const unsupported = unsupportedNodeApi(process.versions.napi, process.version)
  if (unsupported !== undefined) throw new Error(unsupported)
  const database = new Database(filename, { readonly: !writable, fileMustExist: !writable, timeout: BUSY_TIMEOUT_MS })
  // Integers come as BigInt so that values beyond 2^53 survive (then served as strings).
  database.defaultSafeIntegers(true)
  // WAL lets an editor commit while we read; only set on files we may write.
  if (writable) database.pragma('journal_mode = WAL')
  return new KyselyPostStore(new Kysely<Tables>({ dialect: new SqliteDialect({ database: withPreparedStatements(database) }) }), createSqliteSpec(database, filename), publishing)
}
