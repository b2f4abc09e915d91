// SQLite's change token, the same in every process on one file. PRAGMA data_version tells a
// connection exactly whether another one committed, but its values are the connection's own;
// the file itself keeps no per-commit counter in WAL mode. So `migrate` (and the fresh default
// file) installs one: a row that triggers on `posts` set to a new random value inside every
// writing transaction (SQLite has no way to write a table while skipping its triggers, and
// DELETE without WHERE is not optimised into a truncate where triggers exist). A random value
// rather than a count: a copy of the file that went its own way never reuses a value with
// other content, and a backup restored brings back its own value with its own content.
// On a file `migrate` never ran on (served read-only, so nothing is installed), the token is
// data_version under a nonce of the connection: exact, but only within the process.
import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'

const COUNTER_TABLE = 'blog_read_api_changes'
const TRIGGERS = { INSERT: 'blog_read_api_posts_inserted', UPDATE: 'blog_read_api_posts_updated', DELETE: 'blog_read_api_posts_deleted' } as const

/** Creates the counter and its triggers on `posts` where they are missing, in one transaction. */
export function installChangeCounter (database: Database.Database): void {
  database.transaction(() => {
    database.exec(`CREATE TABLE IF NOT EXISTS ${COUNTER_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`)
    database.exec(`INSERT OR IGNORE INTO ${COUNTER_TABLE} (id, version) VALUES (1, random())`)
    for (const [event, name] of Object.entries(TRIGGERS)) {
      database.exec(`CREATE TRIGGER IF NOT EXISTS ${name} AFTER ${event} ON posts BEGIN UPDATE ${COUNTER_TABLE} SET version = random(); END`)
    }
  })()
}

export interface ChangeTokenReader {
  /** The token now; read it before the data it labels. */
  read: () => string
  /** Looks for the counter again at the next read (after this connection changed the schema). */
  recheck: () => void
}

/**
 * Reads the counter when the file has it and every trigger, else data_version under a nonce of
 * this connection (its data_version numbers are its own). Whether the counter is there is checked again whenever data_version says
 * another connection committed (a schema change is a commit too).
 */
export function changeTokenReader (database: Database.Database): ChangeTokenReader {
  const dataVersion = database.prepare('PRAGMA data_version').pluck()
  const nonce = randomBytes(6).toString('base64url')
  const parts = database.prepare(`SELECT count(*) FROM sqlite_master WHERE (type = 'table' AND name = ?)
    OR (type = 'trigger' AND tbl_name = 'posts' AND name IN (?, ?, ?))`).pluck()
  let seen: unknown
  let counter: Database.Statement | undefined
  return {
    read () {
      const version = dataVersion.get() as bigint
      if (version !== seen) {
        seen = version
        const installed = parts.get(COUNTER_TABLE, ...Object.values(TRIGGERS)) === 4n
        counter = installed ? database.prepare(`SELECT version FROM ${COUNTER_TABLE} WHERE id = 1`).pluck() : undefined
      }
      const value = counter?.get() as bigint | undefined
      return value === undefined ? `${nonce}.${version}` : `c${value}`
    },
    recheck: () => { seen = undefined }
  }
}
