// The benchmark's posts in a MySQL/MariaDB database, as bench/dataset.ts makes them for the other
// stores: the database `blog_bench_<N>` (`blog_bench_search_<N>`) on the server, reused when its
// marker (written last) names this generator, dataset and N and it holds N rows; otherwise rebuilt.
import { createConnection, type Connection } from 'mysql2/promise'
import { COLUMNS, GENERATOR_VERSION, migrate, postsOf, type Dataset } from './dataset.js'

export const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/test'

/** Rows per INSERT: well under max_allowed_packet (16 MiB by default) for 3 KB posts. */
const BATCH = 500
/** A table of the bench database only (the service serves `posts` alone): MySQL has no database comments. */
const MARKER_TABLE = 'blog_bench_marker'

async function withConnection<T> (url: string, use: (connection: Connection) => Promise<T>): Promise<T> {
  const connection = await createConnection({ uri: url })
  try {
    // Timestamps are written as UTC wall-clock time, as the service reads them.
    await connection.query("SET time_zone = '+00:00'")
    return await use(connection)
  } finally {
    await connection.end()
  }
}

/** `published_at` as DATETIME text: MySQL refuses the ISO form's `T` and `Z` in strict mode. */
const datetime = (iso: string): string => iso.replace('T', ' ').replace('Z', '')

export async function prepareMysqlDataset (n: number, cli: string, serverUrl: string, env = process.env, dataset: Dataset = 'posts',
  name = dataset === 'posts' ? `blog_bench_${n}` : `blog_bench_${dataset}_${n}`): Promise<string> {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const search = dataset === 'search'
  const marker = `blog-read-api bench dataset: generator ${GENERATOR_VERSION}, ${search ? 'search, ' : ''}${n} posts`
  const reusable = await withConnection(serverUrl, async (admin) => {
    const [found] = await admin.query('SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = ?', [name, MARKER_TABLE])
    if ((found as unknown[]).length > 0) {
      const [rows] = await admin.query(`SELECT (SELECT marker FROM \`${name}\`.${MARKER_TABLE}) AS marker, (SELECT COUNT(*) FROM \`${name}\`.posts) AS n`)
      const [row] = rows as Array<{ marker: string, n: number }>
      if (row?.marker === marker && Number(row.n) === n) return true
    }
    await admin.query(`DROP DATABASE IF EXISTS \`${name}\``)
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`)
    return false
  })
  // Also on reuse: `migrate` is idempotent, and a newer one may install or remove what the store relies on.
  await migrate(cli, url.href, env, search && reusable)
  if (reusable) return url.href
  await withConnection(url.href, async (db) => {
    const post = postsOf(dataset, n)
    await db.beginTransaction()
    for (let start = 0; start < n; start += BATCH) {
      const rows = Array.from({ length: Math.min(BATCH, n - start) }, (_, i) => {
        const row = post(start + i)
        return COLUMNS.map((column) => column === 'published_at' || column === 'updated_at' ? datetime(row[column]) : row[column])
      })
      await db.query(`INSERT INTO posts (${COLUMNS.join(', ')}) VALUES ?`, [rows])
    }
    await db.commit()
    await db.query(`CREATE TABLE ${MARKER_TABLE} (marker VARCHAR(200) NOT NULL)`)
    await db.query(`INSERT INTO ${MARKER_TABLE} VALUES (?)`, [marker])
    await db.query('ANALYZE TABLE posts')
  })
  // The search index after the rows, as an operator would make it on an existing table.
  if (search) await migrate(cli, url.href, env, search)
  return url.href
}
