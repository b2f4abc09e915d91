// Kysely's PostgreSQL dialect, made safe behind a transaction pooler (PgBouncer in transaction
// mode, with its default settings): a pooler hands each transaction to any server connection,
// so nothing may live in the session. The statement time-out is therefore not a start-up
// parameter (PgBouncer refuses it) nor a session SET, but `SET LOCAL` at the start of each
// transaction; no query is a named prepared statement. Unless the connection is a session of
// its own (DB_PREPARED_STATEMENTS=on): then the time-out is the session's, and queries run as they are.
import { PostgresDialect, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely'
import pg from 'pg'

/** How long a query may run on the server, and in all as its client sees it. */
export interface QueryBounds {
  statementTimeoutMs: number
  /** The session already has the statement time-out (a start-up parameter): no SET LOCAL needed. */
  sessionTimeout: boolean
  /**
   * The wait for a server connection plus the statement: a pooler queues a transaction until one
   * of its server connections is free (PgBouncer for up to 120 s by default), where the
   * server's time-out cannot reach it. Past this, the connection is closed and the query fails.
   */
  queryTimeoutMs: number
}

/**
 * `text` (no parameters) behind a statement time-out of its own, in one round trip: a simple-
 * protocol query string of several statements runs as one implicit transaction, which `SET
 * LOCAL` lasts for, and PostgreSQL (13+) arms the time-out afresh for each statement of it.
 * Its results are an array, one per statement: read the last.
 */
export function withStatementTimeout (timeoutMs: number, text: string): string {
  return `SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}; ${text}`
}

/** A query with a client-side time-out: pg honours `query_timeout` per query, which @types/pg does not declare. */
export function timedQuery (text: string, queryTimeoutMs: number, values?: unknown[]): pg.QueryConfig {
  const config: pg.QueryConfig & { query_timeout: number } = { text, values, query_timeout: queryTimeoutMs }
  return config
}

/** The last statement's result of a query string run by `pg` (an array when it held several). */
export function lastResult<R extends pg.QueryResultRow> (result: pg.QueryResult<R> | Array<pg.QueryResult<R>>): pg.QueryResult<R> {
  return Array.isArray(result) ? result[result.length - 1] as pg.QueryResult<R> : result
}

/**
 * Whether a connection that failed a query may still be used: only after an error the server
 * reported for that statement. After a client-side time-out (its query may still be running or
 * queued), a lost connection or an error of ours, its state is unknown.
 */
export function isReusableAfter (err: unknown): boolean {
  return err instanceof pg.DatabaseError && err.severity !== 'FATAL' && err.severity !== 'PANIC'
}

const COUNTED_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

function toQueryResult<R> ({ command, rowCount, rows }: pg.QueryResult): QueryResult<R> {
  return {
    numAffectedRows: COUNTED_COMMANDS.has(command) ? BigInt(rowCount ?? 0) : undefined,
    rows: (rows ?? []) as R[]
  }
}

class BoundedConnection implements DatabaseConnection {
  readonly #client: pg.PoolClient
  readonly #bounds: QueryBounds
  /** Inside a transaction the driver began (and bounded): queries run as they are. */
  inTransaction = false
  /** Left in an unknown state: closed on release rather than reused. */
  broken = false

  constructor (client: pg.PoolClient, bounds: QueryBounds) {
    this.#client = client
    this.#bounds = bounds
  }

  async run (text: string, values?: unknown[]): Promise<pg.QueryResult> {
    try {
      return lastResult(await this.#client.query(timedQuery(text, this.#bounds.queryTimeoutMs, values)))
    } catch (err) {
      if (!isReusableAfter(err)) this.broken = true
      throw err
    }
  }

  async executeQuery<R> ({ sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction || this.#bounds.sessionTimeout) return toQueryResult(await this.run(sql, [...parameters]))
    // Without parameters, the query joins the SET LOCAL in one string: one round trip.
    if (parameters.length === 0) return toQueryResult(await this.run(withStatementTimeout(this.#bounds.statementTimeoutMs, sql)))
    // A parameterised query needs the extended protocol, one statement per message: it runs in a
    // transaction of its own, begun and bounded in one round trip, and committed in another.
    await this.run(withStatementTimeout(this.#bounds.statementTimeoutMs, 'BEGIN'))
    try {
      const result = await this.run(sql, [...parameters])
      await this.run('COMMIT')
      return toQueryResult(result)
    } catch (err) {
      if (!this.broken) await this.run('ROLLBACK').catch(() => { this.broken = true })
      throw err
    }
  }

  // The store streams with pg-cursor itself, in a transaction (postgres-store.ts).
  async * streamQuery<R> (): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streamQuery is not used: the PostgreSQL store streams with its own cursor')
  }

  release (): void {
    this.#client.release(this.broken || this.inTransaction ? new Error('closed in an unknown state') : undefined)
  }
}

class BoundedDriver implements Driver {
  readonly #pool: pg.Pool
  readonly #bounds: QueryBounds

  constructor (pool: pg.Pool, bounds: QueryBounds) {
    this.#pool = pool
    this.#bounds = bounds
  }

  async init (): Promise<void> {}

  async acquireConnection (): Promise<BoundedConnection> {
    return new BoundedConnection(await this.#pool.connect(), this.#bounds)
  }

  async beginTransaction (connection: BoundedConnection, { isolationLevel, accessMode }: TransactionSettings): Promise<void> {
    const begin = ['BEGIN', isolationLevel === undefined ? '' : `ISOLATION LEVEL ${isolationLevel}`, accessMode ?? ''].filter((s) => s !== '').join(' ')
    await connection.run(this.#bounds.sessionTimeout ? begin : withStatementTimeout(this.#bounds.statementTimeoutMs, begin))
    connection.inTransaction = true
  }

  async commitTransaction (connection: BoundedConnection): Promise<void> {
    await connection.run('COMMIT')
    connection.inTransaction = false
  }

  async rollbackTransaction (connection: BoundedConnection): Promise<void> {
    await connection.run('ROLLBACK')
    connection.inTransaction = false
  }

  async releaseConnection (connection: BoundedConnection): Promise<void> {
    connection.release()
  }

  async destroy (): Promise<void> {
    await this.#pool.end()
  }
}

/** Kysely's PostgreSQL dialect over `pool`, each query or transaction within `bounds`. */
export class BoundedPostgresDialect extends PostgresDialect {
  readonly #pool: pg.Pool
  readonly #bounds: QueryBounds

  constructor (pool: pg.Pool, bounds: QueryBounds) {
    super({ pool })
    this.#pool = pool
    this.#bounds = bounds
  }

  override createDriver (): Driver {
    return new BoundedDriver(this.#pool, this.#bounds)
  }
}
