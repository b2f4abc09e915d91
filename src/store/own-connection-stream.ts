// How PostgreSQL and MySQL stream a list: on a pooled connection of its own (other reads go on
// meanwhile), with the statement time-out lifted for it, since the query lasts as long as the
// client takes to read the list (a 100,000-post list to a slow client takes minutes; the
// front's body time-out bounds a stalled reader). The drivers supply the steps.

interface OwnConnectionSteps<Connection> {
  acquire: () => Promise<Connection>
  liftStatementTimeout: (connection: Connection) => Promise<void>
  /** In batches, as the store's streams are (dialect-spec.ts). */
  rows: (connection: Connection) => AsyncIterable<ReadonlyArray<Record<string, unknown>>>
  restoreStatementTimeout: (connection: Connection) => Promise<void>
  /** Back to the pool when `reusable`, else closed. */
  release: (connection: Connection, reusable: boolean) => void
}

export async function * streamOnOwnConnection<Connection> (steps: OwnConnectionSteps<Connection>): AsyncGenerator<ReadonlyArray<Record<string, unknown>>> {
  const connection = await steps.acquire()
  // Only a connection that read its whole result and got its time-out back is reused: one left
  // mid-result (the client went away) or broken is closed.
  let reusable = false
  try {
    await steps.liftStatementTimeout(connection)
    yield * steps.rows(connection)
    await steps.restoreStatementTimeout(connection)
    reusable = true
  } finally {
    steps.release(connection, reusable)
  }
}
