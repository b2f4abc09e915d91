// How long `blog-read-api import` takes: N generated Markdown files (the benchmark's
// posts, about 3 KB of Markdown each, with full front matter) in a temporary folder of one
// sub-folder per year, imported through the built CLI into a fresh database of each store:
// the first import (every post inserted), a re-run (every post unchanged) and a dry run, each
// the median of a few rounds (a fresh database each), wall-clock time of the whole command.
//   npm run bench:import -- [--files 2000] [--store sqlite,postgres] [--rounds 3]
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs, promisify } from 'node:util'
import pg from 'pg'
import { stringify } from 'yaml'
import { DEFAULT_POSTGRES_URL, generatePost } from './dataset.js'

const execFileAsync = promisify(execFile)
const CLI = process.env.BENCH_CLI ?? fileURLToPath(new URL('../dist/cli.js', import.meta.url))

const { values } = parseArgs({
  options: { files: { type: 'string', default: '2000' }, store: { type: 'string', default: 'sqlite,postgres' }, rounds: { type: 'string', default: '3' } }
})
const files = Number(values.files)
const rounds = Number(values.rounds)
const stores = values.store.split(',')

/** N Markdown files, `<year>/<slug>.md`: the slug comes from the file name, as most blogs have it. */
function generateFiles (folder: string, n: number): number {
  let bytes = 0
  for (let i = 0; i < n; i++) {
    const post = generatePost(i)
    const frontMatter = stringify({
      title: post.title,
      date: post.published_at,
      updated: post.updated_at,
      author: post.author,
      tags: JSON.parse(post.tags) as string[],
      summary: post.summary
    })
    const text = `---\n${frontMatter}---\n${post.content}`
    const year = join(folder, post.published_at.slice(0, 4))
    mkdirSync(year, { recursive: true })
    writeFileSync(join(year, `${post.slug}.md`), text)
    bytes += Buffer.byteLength(text)
  }
  return bytes
}

async function cli (args: string[], databaseUrl: string): Promise<{ ms: number, summary: string }> {
  const started = process.hrtime.bigint()
  const { stdout } = await execFileAsync(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    maxBuffer: 64 * 1024 * 1024
  })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  return { ms, summary: stdout.trimEnd().split('\n').at(-1) ?? '' }
}

async function withPostgresDatabase<T> (round: number, use: (url: string) => Promise<T>): Promise<T> {
  const serverUrl = process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL
  const name = `blog_import_bench_${process.pid}_${round}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  try {
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    return await use(url.href)
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await admin.end()
  }
}

const work = mkdtempSync(join(tmpdir(), 'blog-read-api-import-bench-'))
try {
  const folder = join(work, 'posts')
  const bytes = generateFiles(folder, files)
  console.log(`${files} files, ${(bytes / 1024 / 1024).toFixed(1)} MB, in ${folder}; Node ${process.version}; median of ${rounds} rounds\n`)
  console.log('| store | first import (all inserted) | re-run (all unchanged) | dry run |')
  console.log('|---|--:|--:|--:|')
  const median = (ms: number[]): number => [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)] ?? Number.NaN
  const cell = (ms: number[]): string => `${(median(ms) / 1000).toFixed(2)} s (${Math.round(files / (median(ms) / 1000))} files/s)`
  for (const store of stores) {
    const times: number[][] = [[], [], []]
    const measure = async (databaseUrl: string): Promise<void> => {
      await cli(['migrate'], databaseUrl)
      const runs = [await cli(['import', folder], databaseUrl), await cli(['import', folder], databaseUrl), await cli(['import', '--dry-run', folder], databaseUrl)]
      for (const [i, run] of runs.entries()) {
        times[i]?.push(run.ms)
        console.error(`  ${store}: ${(run.ms / 1000).toFixed(2)} s  ${run.summary}`)
      }
    }
    for (let round = 0; round < rounds; round++) {
      if (store === 'sqlite') await measure(join(work, `blog-${round}.db`))
      else if (store === 'postgres') await withPostgresDatabase(round, measure)
      else throw new Error(`unknown store "${store}" (sqlite, postgres)`)
    }
    console.log(`| ${store} | ${times.map(cell).join(' | ')} |`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
