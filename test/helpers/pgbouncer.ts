// PgBouncer (Debian's `pgbouncer`) in front of the PostgreSQL server of TEST_POSTGRES_URL, as a
// deployment would run it: transaction pooling and its default settings, but for a small pool
// (default_pool_size = 2), so that the service's connections share two server connections.
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './fake-upstream.js'
import { findExecutable, missing, serverFolder, startServer } from './server-processes.js'

const PGBOUNCER = findExecutable(['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer', '/opt/homebrew/bin/pgbouncer'])

/** Why the PgBouncer suite cannot run here (a failure in CI), or false. */
export const pgbouncerSkip: string | false = PGBOUNCER === undefined ? missing('pgbouncer is not installed (apt-get install pgbouncer)') : false

export interface Pgbouncer {
  /** The database of `url` (on the PostgreSQL server), through PgBouncer. */
  through: (url: string) => string
  /** A statement on PgBouncer's admin console (SHOW POOLS, SHOW STATS…): its rows. */
  admin: (statement: string) => Promise<Array<Record<string, unknown>>>
  stop: () => Promise<void>
}

const quoted = (value: string): string => `"${value.replaceAll('"', '""')}"`

export async function startPgbouncer (serverUrl: string, { poolSize = 2 } = {}): Promise<Pgbouncer> {
  if (PGBOUNCER === undefined) throw new Error('pgbouncer is not installed (apt-get install pgbouncer): this suite is mandatory in CI')
  const server = new URL(serverUrl)
  const user = decodeURIComponent(server.username || 'postgres')
  const port = await freePort()
  const folder = serverFolder('blog-read-api-pgbouncer-')
  // Every database of the server, by the name the client asks for. Clients log in without a
  // password; PgBouncer logs in to the server with the one in the auth file, if any.
  writeFileSync(join(folder.path, 'users.txt'), `${quoted(user)} ${quoted(decodeURIComponent(server.password))}\n`)
  writeFileSync(join(folder.path, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=${server.hostname} port=${server.port || 5432}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(folder.path, 'users.txt')}`,
    `admin_users = ${user}`,
    'pool_mode = transaction',
    `default_pool_size = ${poolSize}`,
    ''
  ].join('\n'))
  let bouncer
  try {
    bouncer = await startServer(PGBOUNCER, [join(folder.path, 'pgbouncer.ini')], {
      // SIGINT waits for every client to leave; SIGTERM stops at once.
      stopSignal: 'SIGTERM',
      ready: async () => await new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true) })
        socket.on('error', () => resolve(false))
      })
    })
  } catch (err) {
    folder.remove()
    throw err
  }
  const running = bouncer
  return {
    through: (url) => {
      const target = new URL(url)
      target.host = `127.0.0.1:${port}`
      target.password = ''
      return target.href
    },
    admin: async (statement) => {
      const console = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' })
      await console.connect()
      try {
        return (await console.query(statement)).rows as Array<Record<string, unknown>>
      } finally {
        await console.end()
      }
    },
    stop: async () => {
      await running.stop()
      folder.remove()
    }
  }
}
