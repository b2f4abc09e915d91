// Kysely's PostgreSQL dialect, made safe behind a transaction pooler (PgBouncer in transaction
// mode, with its default settings): a pooler hands each transaction to any server connection,
// so nothing may live in the session. The statement time-out is therefore not a start-up
// parameter (PgBouncer refuses it) nor a session SET, but `SET LOCAL` at the start of each
// transaction; no query is a named prepared statement.
import { CompiledQuery, PostgresDialect, type DatabaseConnection, type Driver, type QueryResult, type TransactionSettings } from 'kysely'
import type pg from 'pg'

/**
 * `text` (no parameters) behind a statement time-out of its own, in one round trip: a simple-
 * protocol query string of several statements runs as one implicit transaction, which `SET
 * LOCAL` lasts for, and PostgreSQL (13+) arms the time-out afresh for each statement of it.
 * Its results are an array, one per statement: read the last.
 */
export function withStatementTimeout (timeoutMs: number, text: string): string {
  return `SET LOCAL statement_timeout = ${Math.trunc(timeoutMs)}; ${text}`
}

/** The last statement's result of a query string run by `pg` (an array when it held several). */
export function lastResult<R extends pg.QueryResultRow> (result: pg.QueryResult<R> | Array<pg.QueryResult<R>>): pg.QueryResult<R> {
  return Array.isArray(result) ? result[result.length - 1] as pg.QueryResult<R> : result
}

const COUNTED_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE'])

function toQueryResult<R> ({ command, rowCount, rows }: pg.QueryResult): QueryResult<R> {
  return {
    numAffectedRows: COUNTED_COMMANDS.has(command) ? BigInt(rowCount ?? 0) : undefined,
    rows: (rows ?? []) as R[]
  }
}

class BoundedConnection implements DatabaseConnection {
  readonly client: pg.PoolClient
  /** Inside a transaction the driver began (and bounded): queries run as they are. */
  inTransaction = false
  /** Left in an unknown state (a ROLLBACK failed): closed on release rather than reused. */
  broken = false
  readonly #timeoutMs: number

  constructor (client: pg.PoolClient, timeoutMs: number) {
    this.client = client
    this.#timeoutMs = timeoutMs
  }

  async executeQuery<R> ({ sql, parameters }: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction) return toQueryResult(await this.client.query(sql, [...parameters]))
    // Without parameters, the query joins the SET LOCAL in one string: one round trip.
    if (parameters.length === 0) return toQueryResult(lastResult(await this.client.query(withStatementTimeout(this.#timeoutMs, sql))))
    // A parameterised query needs the extended protocol, one statement per message: it runs in a
    // transaction of its own, begun and bounded in one round trip, and committed in another.
    await this.client.query(withStatementTimeout(this.#timeoutMs, 'BEGIN'))
    try {
      const result = await this.client.query(sql, [...parameters])
      await this.client.query('COMMIT')
      return toQueryResult(result)
    } catch (err) {
      await this.client.query('ROLLBACK').catch(() => { this.broken = true })
      throw err
    }
  }

  // The store streams with pg-cursor itself, in a transaction (postgres-store.ts).
  async * streamQuery<R> (): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streamQuery is not used: the PostgreSQL store streams with its own cursor')
  }
}

class BoundedDriver implements Driver {
  readonly #pool: pg.Pool
  readonly #timeoutMs: number

  constructor (pool: pg.Pool, timeoutMs: number) {
    this.#pool = pool
    this.#timeoutMs = timeoutMs
  }

  async init (): Promise<void> {}

  async acquireConnection (): Promise<BoundedConnection> {
    return new BoundedConnection(await this.#pool.connect(), this.#timeoutMs)
  }

  async beginTransaction (connection: BoundedConnection, { isolationLevel, accessMode }: TransactionSettings): Promise<void> {
    const begin = ['BEGIN', isolationLevel === undefined ? '' : `ISOLATION LEVEL ${isolationLevel}`, accessMode ?? ''].filter((s) => s !== '').join(' ')
    await connection.client.query(withStatementTimeout(this.#timeoutMs, begin))
    connection.inTransaction = true
  }

  async commitTransaction (connection: BoundedConnection): Promise<void> {
    connection.inTransaction = false
    await connection.client.query('COMMIT')
  }

  async rollbackTransaction (connection: BoundedConnection): Promise<void> {
    connection.inTransaction = false
    await connection.client.query('ROLLBACK')
  }

  async releaseConnection (connection: BoundedConnection): Promise<void> {
    connection.client.release(connection.broken || connection.inTransaction ? new Error('left in an unknown transaction state') : undefined)
  }

  async destroy (): Promise<void> {
    await this.#pool.end()
  }
}

/** Kysely's PostgreSQL dialect over `pool`, each transaction bounded by `statementTimeoutMs`. */
export class TransactionPoolingDialect extends PostgresDialect {
  readonly #pool: pg.Pool
  readonly #timeoutMs: number

  constructor (pool: pg.Pool, statementTimeoutMs: number) {
    super({ pool })
    this.#pool = pool
    this.#timeoutMs = statementTimeoutMs
  }

  override createDriver (): Driver {
    return new BoundedDriver(this.#pool, this.#timeoutMs)
  }
}
