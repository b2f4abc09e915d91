// PostgreSQL's change token: the server's own record of what is committed, which every write
// moves whoever makes it and however (triggers disabled, session_replication_role = replica,
// TRUNCATE, pg_restore, a logical-replication subscription), with nothing installed in the
// database. The reasoning is in docs/decisions.md ("PostgreSQL change tokens from the snapshot").
//
// On a primary: the current snapshot's xmax (one past the newest finished transaction) and its
// in-progress transactions. A commit the data read did not see either belongs to a transaction
// listed in progress by the token's snapshot (it leaves the list when it becomes visible) or has
// an id at or past the token's xmax (its end raises xmax past it): either way the token moves.
// No WAL position is involved, so there is no window between a commit's WAL record and its
// visibility to reason about.
//
// On a hot standby (whose snapshots keep no list): the replay position. Replay applies a
// commit, making it visible, before it moves the position past its record, so a position read
// before the data covers only commits the data sees; any later commit moves it.
import pg from 'pg'
import { createHash } from 'node:crypto'
import { lastResult } from './postgres-dialect.js'
import { StoreUnavailableError } from './store.js'

/**
 * One statement, no table: whether `posts` is there (a table gone is an outage, as for the
 * reads), and the position. A standby's snapshot lists no transactions (they are all kept as
 * sub-transactions there), and a primary has no replay position: each side reads its own.
 */
export const CHANGE_TOKEN_QUERY = `SELECT to_regclass('posts') IS NOT NULL AS present,
    CASE WHEN pg_is_in_recovery() THEN 'r' || pg_last_wal_replay_lsn()::text ELSE 's' || pg_current_snapshot()::text END AS position`

/** SQLSTATE of an undefined function: an engine without pg_current_snapshot (PostgreSQL before 13, some compatibles). */
const UNDEFINED_FUNCTION = '42883'

/** In-progress lists longer than this are digested, to keep the token short. */
const MAX_LISTED_CHARS = 64

/**
 * The token of a position: `s<xmax>` or `s<xmax>-<in-progress ids>` on a primary, `r<lsn>` on a
 * standby. The same server state gives the same token in every process.
 */
export function tokenOfPosition (position: string): string {
  if (position.startsWith('r')) return position.replace('/', '-')
  // `s<xmin>:<xmax>:<xip,xip…>`; xmin is the smallest of the others.
  const [, xmax = '', running = ''] = position.slice(1).split(':')
  if (running === '') return `s${xmax}`
  const listed = running.replaceAll(',', '~')
  return `s${xmax}-${listed.length <= MAX_LISTED_CHARS ? listed : createHash('sha256').update(running).digest('base64url').slice(0, 22)}`
}

/** The token from the query's result; rejects as an outage when `posts` is gone. */
export function tokenOfResult (result: pg.QueryResult | pg.QueryResult[]): string {
  const [row] = lastResult<{ present: boolean, position: string | null }>(result).rows
  if (row?.present !== true) throw new StoreUnavailableError('the postgres store has no posts table')
  if (row.position === null) throw new StoreUnavailableError('the postgres store has no replay position')
  return tokenOfPosition(row.position)
}

/** Whether the engine answers the token query at all (asked once, at start-up). */
export async function answersChangeToken (run: () => Promise<unknown>): Promise<boolean> {
  try {
    await run()
    return true
  } catch (err) {
    if (err instanceof pg.DatabaseError && err.code === UNDEFINED_FUNCTION) return false
    throw err
  }
}
