// A front over several post APIs, all real processes of the built CLI on loopback, under a steady
// load: a rolling restart costs no failed request; a post API killed is routed around once the
// front takes it out of rotation, and takes load again once back; a lone post API back after an
// outage serves every request sent once it listens. Needs a current build (`npm ci` builds;
// after editing src/, `npm run build`). Answers are told apart by when their request was sent,
// not by a window of time.
// An editor writes meanwhile: the front confirms its copies with the post API that labelled them
// (src/contract/posts-version.ts), so only a change sends calls for posts over the rotation again.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test, type TestContext } from 'node:test'
import Database from 'better-sqlite3'
import { runCli, startCli, type RunningCli } from '../helpers/cli.js'
import { get } from '../helpers/http.js'
import { sentSince, startLoad, tally, type Answer, type Load } from '../helpers/load.js'
import { parseMetrics, valueOf } from '../helpers/metrics-text.js'
import { pollUntil } from '../helpers/poll.js'

const PATHS = ['/api/blog/hello-world', '/api/blog', '/api/blog/two-tiers', '/api/blog/slugs-and-stores']
const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-fleet-'))
const database = join(dir, 'blog.db')

before(async () => {
  for (const command of ['migrate', 'seed']) {
    const { code, stderr } = await runCli([command], { DATABASE_URL: database })
    assert.equal(code, 0, stderr)
  }
})
after(() => rmSync(dir, { recursive: true, force: true }))

/** A post API process, and the requests for posts it has logged (its access log, one line each). */
interface PostsApi {
  running: RunningCli
  port: number
  url: string
  requests: () => number
}

/** Starts `blog-read-api posts-api` on `port` (0: any free port), stopped after the test. */
async function startPostsApi (t: TestContext, port = 0): Promise<PostsApi> {
  const running = await startCli(['posts-api'], { DATABASE_URL: database, POSTS_PORT: String(port), LOG_LEVEL: 'info' }, ['posts'])
  t.after(async () => { await running.stop() })
  let requests = 0
  let partial = ''
  running.child.stdout?.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n')
    partial = lines.pop() ?? ''
    for (const line of lines) if (line.includes('"msg":"request"') && line.includes('"url":"/api/')) requests++
  })
  const url = running.urls.posts ?? assert.fail('no post API URL')
  return { running, port: Number(new URL(url).port), url, requests: () => requests }
}

/** An editor changing a post every `everyMs` until the test ends. */
function startEditing (t: TestContext, everyMs = 50): void {
  const db = new Database(database)
  const update = db.prepare("UPDATE posts SET title = ? WHERE slug = 'hello-world'")
  let edits = 0
  const timer = setInterval(() => update.run(`Hello, world (edit ${++edits})`), everyMs)
  t.after(() => {
    clearInterval(timer)
    db.close()
  })
}

async function startFrontOver (t: TestContext, upstreams: PostsApi[]): Promise<string> {
  const running = await startCli(['front', '--api-url', upstreams.map((u) => u.url).join(','), '--blog-port', '0'], {}, ['front'])
  t.after(async () => { assert.equal(await running.stop(), 0, 'the front exits 0') })
  return running.urls.front ?? assert.fail('no front URL')
}

/** Sends `signal` and waits for the process to end; resolves to its exit code. */
async function stop (postsApi: PostsApi, signal: 'SIGTERM' | 'SIGKILL'): Promise<number | null> {
  const { child } = postsApi.running
  const exited = once(child, 'exit') as Promise<[number | null]>
  child.kill(signal)
  return (await exited)[0]
}

/** Waits until the post API has logged `count` more requests than now. */
async function takesLoad (postsApi: PostsApi, count: number): Promise<void> {
  const target = postsApi.requests() + count
  await pollUntil(`${postsApi.url} serving ${count} requests`, () => postsApi.requests() >= target)
}

const summary = (answers: Answer[]): string => JSON.stringify(tally(answers))

/** Waits (without a fixed window) until the load has seen `count` answers in all. */
async function answered (load: Load, count: number): Promise<void> {
  await pollUntil(`${count} answers`, () => load.answers.length >= count, { withinMs: 20_000 })
}

/** Waits until the load has seen answers to `count` requests sent `at` or later (ms since it started). */
async function answeredSince (load: Load, at: number, count: number): Promise<void> {
  await pollUntil(`${count} answers to requests sent from ${at} ms`, () => sentSince(load.answers, at).length >= count, { withinMs: 20_000 })
}

/** Every answer a 200 or one of the 502/503/504 problems for an upstream in trouble. */
function assertOnlyMappedFailures (load: Load): void {
  assert.deepEqual(load.errors, [], 'no connection error or time-out at the front')
  const mapped = new Set<string | undefined>(['upstream-unreachable', 'upstream-unavailable', 'upstream-timeout'])
  const other = load.answers.filter((a) => a.status !== 200 && !mapped.has(a.kind))
  assert.deepEqual(other, [], `only 502/503/504 upstream problems: ${summary(load.answers)}`)
}

test('rolling restart: each of two post APIs SIGTERMed and started again in turn, under load: zero failed requests', { timeout: 40_000 }, async (t) => {
  const upstreams = [await startPostsApi(t), await startPostsApi(t)]
  const load = startLoad(await startFrontOver(t, upstreams), PATHS, { connections: 8 })
  t.after(async () => { await load.stop() })
  startEditing(t)
  await answered(load, 100)
  for (const [i, upstream] of upstreams.entries()) {
    assert.equal(await stop(upstream, 'SIGTERM'), 0, 'a post API drains and exits 0')
    const back = await startPostsApi(t, upstream.port)
    upstreams[i] = back
    // Back in rotation before the next one goes.
    await takesLoad(back, 20)
  }
  await answered(load, load.answers.length + 100)
  await load.stop()
  t.diagnostic(`rolling restart: ${load.answers.length} requests, ${load.answers.filter((a) => a.status !== 200).length} failed, ${load.errors.length} connection errors`)
  assert.deepEqual(load.errors, [])
  assert.deepEqual(tally(load.answers), { 200: load.answers.length }, 'every request answered 200')
  assert.ok(load.answers.length > 200, `only ${load.answers.length} requests`)
})

test('one of two post APIs SIGKILLed under load: all 200 once the front has it out of rotation; back, it takes load again', { timeout: 40_000 }, async (t) => {
  const upstreams = [await startPostsApi(t), await startPostsApi(t)]
  const front = await startFrontOver(t, upstreams)
  const load = startLoad(front, PATHS, { connections: 8 })
  t.after(async () => { await load.stop() })
  const [killed, survivor] = upstreams as [PostsApi, PostsApi]
  startEditing(t)
  await takesLoad(killed, 10)
  await stop(killed, 'SIGKILL')
  const killedAt = load.elapsed()
  await pollUntil('the killed post API out of rotation', async () => valueOf(parseMetrics((await get(front, '/metrics')).text), 'blog_read_api_upstreams_in_rotation') === 1, { withinMs: 20_000 })
  const outAt = load.elapsed()
  await answeredSince(load, outAt, 200)
  const back = await startPostsApi(t, killed.port)
  await takesLoad(back, 50)
  const servedBack = back.requests()
  const servedBySurvivor = survivor.requests()
  await load.stop()
  const late = sentSince(load.answers, outAt)
  t.diagnostic(`killed: ${summary(sentSince(load.answers, killedAt).filter((a) => a.sentAt < outAt))} until it was out of rotation, ${summary(late)} after; back: ${servedBack} requests to it`)
  assertOnlyMappedFailures(load)
  assert.ok(late.length > 100 && late.every((a) => a.status === 200), `all 200 once it is out of rotation, and once it is back: ${summary(late)}`)
  assert.ok(servedBack >= 50 && servedBySurvivor > 0)
})

test('a lone post API killed and started again on its port: 502/503/504 meanwhile, all 200 for requests sent once it listens', { timeout: 40_000 }, async (t) => {
  const postsApi = await startPostsApi(t)
  const load = startLoad(await startFrontOver(t, [postsApi]), PATHS, { connections: 8 })
  t.after(async () => { await load.stop() })
  await answered(load, 100)
  await stop(postsApi, 'SIGKILL')
  const killedAt = load.elapsed()
  // Out for as long as 1,000 requests sent after it died take to be answered.
  await answeredSince(load, killedAt, 1000)
  const restartAt = load.elapsed()
  await startPostsApi(t, postsApi.port)
  // When it logged that it listens: a little after it did.
  const listeningAt = load.elapsed()
  await answeredSince(load, listeningAt, 200)
  await load.stop()
  const outage = sentSince(load.answers, killedAt).filter((a) => a.at <= restartAt) // answered by the time it was restarted (Date.now() has whole milliseconds)
  const afterReturn = sentSince(load.answers, listeningAt)
  t.diagnostic(`lone post API back: ${summary(sentSince(load.answers, restartAt).filter((a) => a.sentAt < listeningAt))} for requests sent while it started; during the outage ${summary(outage)}`)
  assertOnlyMappedFailures(load)
  assert.ok(outage.length >= 1000 && outage.every((a) => a.status !== 200), `the outage showed: ${summary(outage)}`)
  assert.ok(afterReturn.length >= 200 && afterReturn.every((a) => a.status === 200), `all 200 for requests sent once it listens: ${summary(afterReturn)}`)
})
