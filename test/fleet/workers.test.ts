// One process per core: `--workers 2` through the built executable, on loopback.
// Several processes answer on the same ports; a killed worker is replaced; SIGTERM to the primary
// under load drains every worker and exits 0 within the shutdown time-out, leaving no process
// behind and no 500; start-up errors are one line, not one per worker. Needs `npm run build`.
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { createServer, type AddressInfo, type Server } from 'node:net'
import { after, before, test } from 'node:test'
import { CLI, settingsOnlyEnv } from '../helpers/cli.js'
import { createSeededSqlite, type TestDatabase } from '../helpers/databases.js'
import { startLoad, tally } from '../helpers/load.js'
import { alive } from '../helpers/server-processes.js'
import { pollUntil } from '../helpers/poll.js'

type LogLine = Record<string, unknown> & { msg?: string, worker?: number, pid?: number }

interface Fleet {
  child: ChildProcess
  /** Every JSON line written to stdout so far, parsed, in order. */
  lines: LogLine[]
  stderr: () => string
  /** The front's base URL, from the workers' "listening at" lines. */
  front: string
  /** Pids of the workers that logged a listening line. */
  workerPids: () => Set<number>
  exited: Promise<{ code: number | null, signal: NodeJS.Signals | null }>
}

let database: TestDatabase
before(async () => {
  database = await createSeededSqlite()
})
after(async () => await database.drop())

const filename = (): string => database.location.dialect === 'sqlite' ? database.location.filename : ''

function spawnCli (args: string[], settings: Record<string, string>): { child: ChildProcess, lines: LogLine[], stderr: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], { env: settingsOnlyEnv(settings), stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: LogLine[] = []
  let partial = ''
  let stderr = ''
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString()
    const complete = text.split('\n')
    partial = complete.pop() ?? ''
    for (const line of complete) {
      try {
        lines.push(JSON.parse(line) as LogLine)
      } catch {
        lines.push({ msg: line })
      }
    }
  })
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  return { child, lines, stderr: () => stderr }
}

/** `serve --workers 2` on the test database, on ports of its choosing; resolves once every worker serves. */
async function startFleet (settings: Record<string, string> = {}): Promise<Fleet> {
  const { child, lines, stderr } = spawnCli(['serve', '--workers', '2'],
    { DATABASE_URL: filename(), BLOG_PORT: '0', POSTS_PORT: '0', ...settings })
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }))
  const output = (): string => `stdout:\n${lines.map((l) => JSON.stringify(l)).join('\n')}\nstderr:\n${stderr()}`
  try {
    // The primary's line, and each worker's two (their order on the shared pipe is not fixed).
    await pollUntil('all workers serving', () => {
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}: ${output()}`)
      return lines.some((l) => l.msg === 'all 2 workers serving') && lines.filter((l) => /listening at/.test(l.msg ?? '')).length === 4
    }, { withinMs: 30_000, everyMs: 50 })
  } catch (err) {
    child.kill('SIGKILL')
    throw err
  }
  const front = /front API listening at (http:\/\/\S+)/.exec(lines.map((l) => l.msg ?? '').join('\n'))?.[1]
  assert.ok(front !== undefined, output())
  const workerPids = (): Set<number> => new Set(lines.filter((l) => /listening at/.test(l.msg ?? '') && l.worker !== undefined).map((l) => l.pid ?? 0))
  return { child, lines, stderr, front, workerPids, exited }
}

/** A GET on a fresh connection (cluster hands out connections, not requests); resolves to its status. */
async function getOnNewConnection (base: string, path: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    httpRequest(new URL(path, base), { agent: false }, (res) => {
      res.resume()
      res.once('end', () => resolve(res.statusCode ?? 0))
    }).once('error', reject).end()
  })
}

/** Worker ids of the front's access lines for `status`. */
const answeringWorkers = (fleet: Fleet): Set<number> =>
  new Set(fleet.lines.filter((l) => l.tier === 'front' && l.msg === 'request' && l.worker !== undefined).map((l) => l.worker ?? 0))

async function stopFleet (fleet: Fleet): Promise<void> {
  if (fleet.child.exitCode === null && fleet.child.signalCode === null) fleet.child.kill('SIGKILL')
  await fleet.exited
  for (const pid of fleet.workerPids()) if (alive(pid)) process.kill(pid, 'SIGKILL')
}

test('--workers 2: two processes share the ports and answer; a killed worker is replaced', { timeout: 60_000 }, async () => {
  const fleet = await startFleet()
  try {
    const listening = fleet.lines.filter((l) => /listening at/.test(l.msg ?? ''))
    assert.equal(listening.length, 4, 'each worker logs its post API and its front')
    assert.equal(new Set(listening.map((l) => l.worker)).size, 2, 'two worker ids')
    assert.equal(fleet.workerPids().size, 2, 'two processes')
    assert.ok(!fleet.workerPids().has(fleet.child.pid ?? 0), 'the primary serves nothing itself')
    assert.equal(new Set(listening.map((l) => /at (\S+)/.exec(l.msg ?? '')?.[1])).size, 2, 'on the same two addresses')

    // Connections go to the workers in turn: both answer.
    await pollUntil('answers from both workers', async () => {
      assert.equal(await getOnNewConnection(fleet.front, '/api/blog/hello-world'), 200)
      return answeringWorkers(fleet).size === 2
    }, { withinMs: 10_000 })

    const [victim] = fleet.workerPids()
    assert.ok(victim !== undefined)
    process.kill(victim, 'SIGKILL')
    const replaced = await pollUntil('a replacement serving', () =>
      fleet.lines.find((l) => /^worker \d+ \(pid \d+\) serving$/.test(l.msg ?? '')), { withinMs: 20_000 })
    assert.ok(fleet.lines.some((l) => l.level === 50 && /ended with SIGKILL; replacing it in \d+ ms/.test(l.msg ?? '')), 'the death is logged')
    assert.equal(alive(victim), false)
    assert.equal(fleet.workerPids().size, 3, 'a new process')
    const replacement = replaced.workerId as number
    await pollUntil('an answer from the replacement', async () => {
      assert.equal(await getOnNewConnection(fleet.front, '/api/blog'), 200)
      return answeringWorkers(fleet).has(replacement)
    }, { withinMs: 10_000 })

    fleet.child.kill('SIGTERM')
    // The same signal again while the workers drain (Ctrl-C under npm comes twice) changes nothing.
    await pollUntil('the primary closing', () => fleet.lines.some((line) => /SIGTERM received/.test(String(line.msg))), { withinMs: 10_000 })
    fleet.child.kill('SIGTERM')
    assert.deepEqual(await fleet.exited, { code: 0, signal: null })
    for (const pid of fleet.workerPids()) assert.equal(alive(pid), false, `worker ${pid} is gone`)
  } finally {
    await stopFleet(fleet)
  }
})

test('--workers 2: SIGTERM to the primary under load drains every worker; exit 0 within the time-out, nothing left, no 500', { timeout: 60_000 }, async () => {
  const shutdownTimeoutMs = 5000
  const fleet = await startFleet({ SHUTDOWN_TIMEOUT_MS: String(shutdownTimeoutMs) })
  const load = startLoad(fleet.front, ['/api/blog', '/api/blog/hello-world', '/api/blog/two-tiers'], { connections: 8 })
  try {
    await pollUntil('load flowing', () => load.answers.length >= 200, { withinMs: 20_000 })
    const signalledAt = performance.now()
    fleet.child.kill('SIGTERM')
    const exit = await fleet.exited
    const elapsed = performance.now() - signalledAt
    await load.stop()
    assert.deepEqual(exit, { code: 0, signal: null }, fleet.stderr())
    assert.ok(elapsed < shutdownTimeoutMs, `closed in ${elapsed.toFixed(0)} ms`)
    for (const pid of fleet.workerPids()) assert.equal(alive(pid), false, `worker ${pid} is gone`)

    // Every answer is a 200, or the 503 a closing server gives on a kept-alive connection, or the
    // 503 a draining front gives when another worker's post API, closing too, answered it so: the
    // front tries such a call once more on a fresh connection, within its retry budget, and past
    // the budget relays it (10 of 220 answers, in one CI run on a slow machine). Once the ports
    // are closed, new connections are refused (load generator errors, not answers).
    const counts = tally(load.answers)
    const closing = ['200', '503 shutting-down', '503 upstream-unavailable']
    for (const key of Object.keys(counts)) assert.ok(closing.includes(key), `unexpected ${key}: ${JSON.stringify(counts)}`)
    assert.ok((counts['200'] ?? 0) >= 200)
    for (const error of load.errors) assert.match(error, /ECONNREFUSED|ECONNRESET|socket hang up|other side closed/)
  } finally {
    await load.stop()
    await stopFleet(fleet)
  }
})

test('--workers 2: a start-up error is one line and a non-zero exit, not one per worker nor a respawn loop', { timeout: 30_000 }, async () => {
  const cases: Array<{ what: string, args: string[], settings: Record<string, string>, line: RegExp, code: number, busy?: boolean }> = [
    // Found by the primary before forking.
    { what: 'a database file that does not exist', args: ['posts-api'], settings: { DATABASE_URL: `${filename()}-absent.db` }, line: /the SQLite file \S+-absent\.db \(DATABASE_URL\) does not exist/, code: 1 },
    { what: 'front without API_URL', args: ['front'], settings: {}, line: /invalid API_URL/, code: 2 },
    // Found by every worker (the port is taken): reported once by the primary.
    { what: 'port in use', args: ['posts-api'], settings: { DATABASE_URL: filename() }, line: /^blog-read-api: cannot start: port \d+ \(POSTS_PORT\) on 127\.0\.0\.1 is in use/, code: 1, busy: true }
  ]
  for (const { what, args, settings, line, code, busy } of cases) {
    const blocker = busy === true ? await new Promise<Server>((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => resolve(s)) }) : undefined
    const port = blocker === undefined ? '0' : String((blocker.address() as AddressInfo).port)
    try {
      const run = spawnCli([...args, '--workers', '2', '--posts-port', port, '--blog-port', '0'], settings)
      const [exitCode] = await once(run.child, 'exit') as [number | null]
      const lines = run.stderr().trimEnd().split('\n')
      assert.equal(exitCode, code, what)
      assert.equal(lines.length, 1, `${what}: one line, got ${run.stderr()}`)
      assert.match(lines[0] ?? '', line, what)
      assert.ok(!run.lines.some((l) => /replacing it/.test(l.msg ?? '')), `${what}: no respawn`)
    } finally {
      blocker?.close()
    }
  }
})

test('WORKERS=1 (the default): no cluster, the process serves itself and its lines carry no worker id', { timeout: 30_000 }, async () => {
  const run = spawnCli(['posts-api'], { DATABASE_URL: filename(), POSTS_PORT: '0' })
  try {
    const listening = await pollUntil('listening', () => run.lines.find((l) => /listening at/.test(l.msg ?? '')), { withinMs: 20_000 })
    assert.equal(listening.pid, run.child.pid)
    assert.equal('worker' in listening, false)
    // Served by this very process; an answer also means its start-up (and signal handling) is complete.
    const url = /at (\S+)/.exec(listening.msg ?? '')?.[1] ?? ''
    assert.equal(await getOnNewConnection(url, '/api/posts'), 200)
    assert.equal((await pollUntil('the access line', () => run.lines.find((l) => l.msg === 'request'))).pid, run.child.pid)
  } finally {
    run.child.kill('SIGTERM')
    assert.equal((await once(run.child, 'exit') as [number | null])[0], 0)
  }
})
