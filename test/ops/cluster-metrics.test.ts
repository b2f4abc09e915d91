// With several workers one scrape covers them all: `serve --workers 2`
// through the built executable; requests spread over both workers, and whichever worker answers
// /metrics, the counts are those of the whole fleet. Needs `npm run build`.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { after, before, test } from 'node:test'
import { VERSION_PATH } from '../../src/contract/posts-version.js'
import { CLI, settingsOnlyEnv } from '../helpers/cli.js'
import { createSeededSqlite, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { parseMetrics, samplesOf, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'

type LogLine = Record<string, unknown> & { msg?: string, worker?: number, tier?: string, url?: string }

let database: TestDatabase
before(async () => {
  database = await createSeededSqlite()
})
after(async () => await database.drop())

test('serve --workers 2: every scrape, whichever worker answers it, counts the requests of both', { timeout: 60_000 }, async () => {
  const filename = database.location.dialect === 'sqlite' ? database.location.filename : ''
  const child = spawn(process.execPath, [CLI, 'serve', '--workers', '2'], {
    env: settingsOnlyEnv({ DATABASE_URL: filename, BLOG_PORT: '0', POSTS_PORT: '0' }),
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const lines: LogLine[] = []
  let partial = ''
  child.stdout.on('data', (chunk: Buffer) => {
    const complete = (partial + chunk.toString()).split('\n')
    partial = complete.pop() ?? ''
    for (const line of complete) lines.push(JSON.parse(line) as LogLine)
  })
  try {
    const front = await pollUntil('both workers serving', () => {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}`)
      const listening = lines.map((l) => /^front API listening at (\S+)/.exec(l.msg ?? '')?.[1]).filter((url) => url !== undefined)
      return lines.some((l) => l.msg === 'all 2 workers serving') && listening.length === 2 ? listening[0] : undefined
    }, { withinMs: 20_000 })

    // A new connection each: the primary hands connections to the workers in turn.
    const requests = 20
    for (let i = 0; i < requests; i++) assert.equal((await get(front, '/api/blog/hello-world', { connection: 'close' })).status, 200)
    // Access lines are held back for at most the flush interval (250 ms) before they are written.
    const answered = await pollUntil('the access line of every request', () => {
      const frontLines = lines.filter((l) => l.msg === 'request' && l.tier === 'front' && l.url === '/api/blog/hello-world')
      return frontLines.length === requests ? frontLines : undefined
    }, { withinMs: 5_000 })
    assert.equal(new Set(answered.map((l) => l.worker)).size, 2, 'both workers answered requests')

    for (let scrape = 0; scrape < 4; scrape++) {
      const answer = await get(front, '/metrics', { connection: 'close' })
      assert.equal(answer.status, 200)
      const samples = parseMetrics(answer.text)
      const count = 'blog_read_api_http_request_duration_seconds_count'
      assert.equal(valueOf(samples, count, { tier: 'front', route: '/api/blog/:slug', method: 'GET', status: '200' }), requests)
      // Each front request made one call to a post API: the post itself (200, or 304 for a copy
      // its front held) or, for a copy labelled with a posts version, that version now.
      const upstream = [...samplesOf(samples, count, { tier: 'posts-api', route: '/api/post/:slug' }),
        ...samplesOf(samples, count, { tier: 'posts-api', route: VERSION_PATH })].reduce((sum, s) => sum + s.value, 0)
      assert.equal(upstream, requests)
      assert.equal(valueOf(samples, 'blog_read_api_upstream_call_duration_seconds_count', { outcome: 'ok' }) +
        valueOf(samples, 'blog_read_api_upstream_call_duration_seconds_count', { outcome: 'not-modified' }), requests)
    }
  } finally {
    child.kill('SIGTERM')
    const [code] = await once(child, 'exit') as [number | null]
    assert.equal(code, 0)
  }
})
