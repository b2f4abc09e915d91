// A hot-standby replica of the PostgreSQL server of TEST_POSTGRES_URL, made as an operator would:
// `pg_basebackup -R` into a temporary folder, then a second server from the same major version's
// binaries on a free port. Debian keeps the primary's postgresql.conf and pg_hba.conf outside
// its data folder, so the copy gets files of its own.
import { chownSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { freePort } from './fake-upstream.js'
import { pollUntil } from './poll.js'
import { findExecutable, missing, runAsServer, serverFolder, startServer } from './server-processes.js'

/** Settings a hot standby must not set below its primary's (it refuses to start otherwise). */
const MATCHED_SETTINGS = ['max_connections', 'max_worker_processes', 'max_wal_senders', 'max_prepared_transactions', 'max_locks_per_transaction']

async function onServer<T> (url: string, run: (client: pg.Client) => Promise<T>, options: pg.ClientConfig = {}): Promise<T> {
  const client = new pg.Client({ connectionString: url, ...options })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

/** Debian's server binaries of the primary's major version (TEST_POSTGRES_BINDIR overrides the folder). */
export async function binaries (primaryUrl: string): Promise<{ folder: string, postgres?: string, basebackup?: string }> {
  const version = await onServer(primaryUrl, async (c) => (await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]?.v)
  const folder = process.env.TEST_POSTGRES_BINDIR ?? `/usr/lib/postgresql/${Math.floor(Number(version) / 10_000)}/bin`
  return { folder, postgres: findExecutable([join(folder, 'postgres')]), basebackup: findExecutable([join(folder, 'pg_basebackup')]) }
}

/** Why the replica suite cannot run here (a failure in CI), or false. */
export async function replicaSkip (primaryUrl: string | undefined): Promise<string | false> {
  if (primaryUrl === undefined || primaryUrl === '') return false // the PostgreSQL suite's own skip says why
  try {
    const { folder, postgres, basebackup } = await binaries(primaryUrl)
    if (postgres === undefined || basebackup === undefined) return missing(`no PostgreSQL server binaries (postgres, pg_basebackup) in ${folder}`)
    await onServer(primaryUrl, async (c) => { await c.query('IDENTIFY_SYSTEM') }, { replication: 'true' } as pg.ClientConfig)
    return false
  } catch (err) {
    return missing(`the PostgreSQL server refuses a replication connection (add "host replication all 127.0.0.1/32 trust" to its pg_hba.conf, as .ci/run does): ${(err as Error).message}`)
  }
}

export interface Replica {
  /** The database of `url` (on the primary), on the replica. */
  through: (url: string) => string
  /** Resolves once the replica has replayed everything the primary has written so far. */
  caughtUp: () => Promise<void>
  stop: () => Promise<void>
}

/** `maxStandbyDelayMs`: how long replay waits for a conflicting query before cancelling it. */
export async function startReplica (primaryUrl: string, { maxStandbyDelayMs = 30_000 } = {}): Promise<Replica> {
  const { folder: binFolder, postgres, basebackup } = await binaries(primaryUrl)
  if (postgres === undefined || basebackup === undefined) throw new Error(`no PostgreSQL server binaries (postgres, pg_basebackup) in ${binFolder}: this suite is mandatory in CI`)
  const primary = new URL(primaryUrl)
  const matched = await onServer(primaryUrl, async (c) => (await c.query<{ name: string, setting: string }>(
    'SELECT name, setting FROM pg_settings WHERE name = ANY($1)', [MATCHED_SETTINGS])).rows)
  const port = await freePort()
  const folder = serverFolder('blog-read-api-replica-')
  const data = join(folder.path, 'data')
  let server
  try {
    await runAsServer(basebackup, [
      '--host', primary.hostname, '--port', primary.port || '5432', '--username', decodeURIComponent(primary.username || 'postgres'),
      '--pgdata', data, '--write-recovery-conf', '--wal-method', 'stream', '--checkpoint', 'fast', '--no-sync'
    ], { PGPASSWORD: decodeURIComponent(primary.password) })
    const files: Record<string, string> = {
      'postgresql.conf': [
        "listen_addresses = '127.0.0.1'",
        `port = ${port}`,
        `unix_socket_directories = '${folder.path}'`,
        'hot_standby = on',
        `max_standby_streaming_delay = ${maxStandbyDelayMs}`,
        'fsync = off',
        "shared_buffers = '32MB'",
        ...matched.map(({ name, setting }) => `${name} = ${setting}`),
        ''
      ].join('\n'),
      'pg_hba.conf': 'local all all trust\nhost all all 127.0.0.1/32 trust\n',
      'pg_ident.conf': ''
    }
    // Owned, as the data folder is, by the account the server runs as.
    const owner = statSync(data)
    for (const [name, text] of Object.entries(files)) {
      writeFileSync(join(data, name), text)
      chownSync(join(data, name), owner.uid, owner.gid)
    }
    const replicaUrl = `postgres://${primary.username || 'postgres'}@127.0.0.1:${port}/postgres`
    server = await startServer(postgres, ['-D', data], {
      // SIGINT: a fast shutdown (SIGTERM would wait for every client to leave).
      stopSignal: 'SIGINT',
      ready: async () => await onServer(replicaUrl, async (c) => (await c.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows[0]?.standby === true)
    })
  } catch (err) {
    folder.remove()
    throw err
  }
  const running = server
  return {
    through: (url) => {
      const target = new URL(url)
      target.host = `127.0.0.1:${port}`
      return target.href
    },
    caughtUp: async () => {
      const written = await onServer(primaryUrl, async (c) => (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]?.lsn)
      const replicaUrl = `postgres://${primary.username || 'postgres'}@127.0.0.1:${port}/postgres`
      await onServer(replicaUrl, async (c) => {
        await pollUntil(`the replica replaying up to ${written}`, async () =>
          (await c.query<{ done: boolean }>('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [written])).rows[0]?.done, { withinMs: 20_000 })
      })
    },
    stop: async () => {
      await running.stop()
      folder.remove()
    }
  }
}
