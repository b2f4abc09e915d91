// SQLite's change token, the same in every process on one file. PRAGMA data_version tells a
// connection exactly whether another one committed, but its values are the connection's own;
// the file itself keeps no per-commit counter in WAL mode. So `migrate` (and the fresh default
// file) installs one: a row that triggers on the tables `posts` reads (`posts` itself, or those a
// `posts` view reads: sqlite-tables-read.ts) set to a new random value inside every writing
// transaction (SQLite has no way to write a table while skipping its triggers, and DELETE without
// WHERE is not optimised into a truncate where triggers exist). A random value rather than a
// count: a copy of the file that went its own way never reuses a value with other content, and a
// backup restored brings back its own value with its own content.
// On a file `migrate` never ran on (served read-only, so nothing is installed), or while a table
// `posts` reads lacks its triggers (a view changed since), the token is data_version under a
// nonce of the connection: exact, but only within the process.
import { randomBytes } from 'node:crypto'
import type Database from 'better-sqlite3'
import { tablesReadByPosts } from './sqlite-tables-read.js'

const COUNTER_TABLE = 'blog_read_api_changes'
const EVENTS = { INSERT: 'inserted', UPDATE: 'updated', DELETE: 'deleted' } as const
const EVENT_NAMES = Object.keys(EVENTS) as Array<keyof typeof EVENTS>

/** The trigger on `table` for `event` (`blog_read_api_posts_inserted` on `posts`). */
const triggerName = (table: string, event: keyof typeof EVENTS): string => `blog_read_api_${table}_${EVENTS[event]}`
const quoted = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** Creates the counter and its triggers on each of `tables` where they are missing, in one transaction. */
export function installChangeCounter (database: Database.Database, tables: readonly string[]): void {
  database.transaction(() => {
    database.exec(`CREATE TABLE IF NOT EXISTS ${COUNTER_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)`)
    database.exec(`INSERT OR IGNORE INTO ${COUNTER_TABLE} (id, version) VALUES (1, random())`)
    for (const table of tables) {
      for (const event of EVENT_NAMES) {
        database.exec(`CREATE TRIGGER IF NOT EXISTS ${quoted(triggerName(table, event))} AFTER ${event} ON ${quoted(table)} BEGIN UPDATE ${COUNTER_TABLE} SET version = random(); END`)
      }
    }
  })()
}

/** Whether the counter is there with every trigger on every table `posts` reads now. */
function counterCoversPosts (database: Database.Database): boolean {
  const read = tablesReadByPosts(database)
  if (!('tables' in read)) return false
  const triggers = database.prepare("SELECT tbl_name, name FROM sqlite_schema WHERE type = 'trigger'").all() as Array<{ tbl_name: string, name: string }>
  const installed = new Set(triggers.map((trigger) => `${trigger.tbl_name}\0${trigger.name}`))
  const hasCounter = database.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?").get(COUNTER_TABLE) !== undefined
  return hasCounter && read.tables.every((table) => EVENT_NAMES.every((event) => installed.has(`${table}\0${triggerName(table, event)}`)))
}

export interface ChangeTokenReader {
  /** The token now; read it before the data it labels. */
  read: () => string
  /** Looks for the counter again at the next read (after this connection changed the schema). */
  recheck: () => void
}

/**
 * Reads the counter when it covers every table `posts` reads, else data_version under a nonce of
 * this connection (its data_version numbers are its own). Whether it does is checked again when
 * data_version says another connection committed and the schema changed with it.
 */
export function changeTokenReader (database: Database.Database): ChangeTokenReader {
  const dataVersion = database.prepare('PRAGMA data_version').pluck()
  const schemaVersion = database.prepare('PRAGMA schema_version').pluck()
  const nonce = randomBytes(6).toString('base64url')
  let seen: unknown
  let seenSchema: unknown
  let counter: Database.Statement | undefined
  return {
    read () {
      const version = dataVersion.get() as bigint
      if (version !== seen) {
        seen = version
        const schema = schemaVersion.get()
        if (schema !== seenSchema) {
          seenSchema = schema
          counter = counterCoversPosts(database) ? database.prepare(`SELECT version FROM ${COUNTER_TABLE} WHERE id = 1`).pluck() : undefined
        }
      }
      const value = counter?.get() as bigint | undefined
      return value === undefined ? `${nonce}.${version}` : `c${value}`
    },
    recheck: () => { seen = undefined; seenSchema = undefined }
  }
}
