// A PostgreSQL server of the test's own (initdb into a temporary folder, the same major version's
// binaries as TEST_POSTGRES_URL's server, a free port), for settings a shared server must not
// get: wal_level = logical, or a synchronous standby that never comes.
import { appendFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { createPostgresDatabase, type TestServer } from './databases.js'
import { freePort } from './fake-upstream.js'
import { binaries } from './replica.js'
import { findExecutable, missing, runAsServer, serverFolder, startServer } from './server-processes.js'

export interface PrivatePostgres {
  /** Fresh databases on this server. */
  server: TestServer
  /** A superuser's URL of its `postgres` database. */
  url: string
  stop: () => Promise<void>
}

/** Why a private server cannot be started here (a failure in CI), or false. */
export async function privatePostgresSkip (referenceUrl: string | undefined): Promise<string | false> {
  if (referenceUrl === undefined || referenceUrl === '') return false // the PostgreSQL suite's own skip says why
  const { folder, postgres } = await binaries(referenceUrl)
  if (postgres === undefined || findExecutable([join(folder, 'initdb')]) === undefined) return missing(`no PostgreSQL server binaries (postgres, initdb) in ${folder}`)
  return false
}

/** Starts a server with `settings` (postgresql.conf lines) added. */
export async function startPrivatePostgres (referenceUrl: string, settings: string[]): Promise<PrivatePostgres> {
  const { folder: binFolder, postgres } = await binaries(referenceUrl)
  const initdb = findExecutable([join(binFolder, 'initdb')])
  if (postgres === undefined || initdb === undefined) throw new Error(`no PostgreSQL server binaries (postgres, initdb) in ${binFolder}: this suite is mandatory in CI`)
  const folder = serverFolder('blog-read-api-private-pg-')
  const data = join(folder.path, 'data')
  const port = await freePort()
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  try {
    await runAsServer(initdb, ['--pgdata', data, '--username', 'postgres', '--auth', 'trust', '--encoding', 'UTF8', '--locale', 'C.UTF-8', '--no-sync'])
    appendFileSync(join(data, 'postgresql.conf'), [
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${folder.path}'`,
      'fsync = off',
      "shared_buffers = '32MB'",
      ...settings,
      ''
    ].join('\n'))
    const server = await startServer(postgres, ['-D', data], {
      stopSignal: 'SIGINT',
      ready: async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        await client.end()
        return true
      }
    })
    return {
      server: { skip: false, create: async () => await createPostgresDatabase(url) },
      url,
      stop: async () => {
        await server.stop()
        folder.remove()
      }
    }
  } catch (err) {
    folder.remove()
    throw err
  }
}
