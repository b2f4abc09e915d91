// Lists too large for memory, held as files by the front: served from the file while the posts
// version they were read under is current, never once it moved, never when the upstream's body
// did not end whole, within the disk budget, and removed when the front closes. Over a fake
// upstream on loopback that labels its answers with a version and answers the version route.
import assert from 'node:assert/strict'
import { appendFileSync, readdirSync, rmSync } from 'node:fs'
import type { ServerResponse } from 'node:http'
import { tmpdir } from 'node:os'
import { connect } from 'node:net'
import { join } from 'node:path'
import { after, afterEach, before, test } from 'node:test'
import { request } from 'undici'
import { POSTS_VERSION_HEADER, VERSION_PATH } from '../../src/contract/posts-version.js'
import { createProcessMetrics } from '../../src/ops/metrics.js'
import { parseMetrics, valueOf } from '../helpers/metrics-text.js'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { get, type TestResponse } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'

const BUFFER_LIMIT = 4096
const DISK_BYTES = 64 * 1024

let upstream: FakeUpstream
/** The version the upstream reads now, and the list it answers under it. */
let version: string | undefined
let list: string
/** Whether the next list answers are cut off after their first bytes, or hold their end back (in heldEnds). */
let cutOff: boolean
let holdEnd = false
const heldEnds: ServerResponse[] = []
const fronts: RunningApp[] = []

/** About `size` bytes of list, its slugs marked `mark`. */
const listOf = (size: number, mark: string): string =>
  JSON.stringify(Array.from({ length: Math.ceil(size / 1000) }, (_, i) => ({ slug: `${mark}-${i}`, content: 'x'.repeat(960) })))

const listCalls = (): number => upstream.requests.filter((req) => req.url?.startsWith('/api/posts') === true && req.url !== VERSION_PATH).length
const filesDirectories = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith('blog-read-api-lists-'))
/** The files in the directories that were not there before. */
const filesIn = (before: Set<string>): number => filesDirectories().filter((name) => !before.has(name)).reduce((n, name) => n + readdirSync(join(tmpdir(), name)).length, 0)

before(async () => {
  upstream = await startFakeUpstream((req, res) => {
    const label: Record<string, string> = version === undefined ? {} : { [POSTS_VERSION_HEADER]: version }
    if (req.url === VERSION_PATH) return json(res, 200, { version: version ?? null }, label)
    res.writeHead(200, { 'content-type': 'application/json', etag: `"L-${version ?? 'none'}"`, 'x-total-count': '7', ...label })
    if (cutOff) res.write(list.slice(0, BUFFER_LIMIT * 2), () => req.socket.destroy())
    else if (holdEnd) res.write(list.slice(0, BUFFER_LIMIT * 2), () => heldEnds.push(res))
    else res.end(list)
  })
})
afterEach(async () => {
  for (const front of fronts.splice(0)) await front.app.close()
})
after(async () => await upstream.close())

async function frontWith (diskBytes = DISK_BYTES): Promise<string> {
  version = 'v1'
  list = listOf(20_000, 'a')
  cutOff = false
  const front = await startFront(upstream.url, { listBufferLimit: BUFFER_LIMIT, cacheDiskMaxBytes: diskBytes, metrics: createProcessMetrics() })
  fronts.push(front)
  return front.url
}

/** The answer to `path`, which must come from its file: without a list call. */
async function heldAnswer (url: string, path: string): Promise<TestResponse> {
  const calls = listCalls()
  const response = await get(url, path)
  assert.equal(response.text, list)
  assert.equal(listCalls(), calls, `${path} was asked upstream instead of read from its file`)
  return response
}

/** Asks for `path` (the upstream answers), then again: from its file. */
async function askedThenHeld (url: string, path: string): Promise<void> {
  assert.equal((await get(url, path)).text, list)
  await heldAnswer(url, path)
}

/**
 * After a list that was not held: the next answer asks upstream (`why`, if not), the one after it
 * reads the file that answer wrote, and no other file of `directories`' new ones is left.
 */
async function askedAgainThenHeldAlone (url: string, directories: Set<string>, why: string): Promise<void> {
  const calls = listCalls()
  assert.equal((await get(url, '/api/blog')).text, list)
  assert.equal(listCalls(), calls + 1, why)
  await heldAnswer(url, '/api/blog')
  await pollUntil('only the whole list\'s file left', () => filesIn(directories) === 1)
}

/** Whether `path` is answered without a list call, `times` times over. */
async function servedHeld (url: string, path: string, times = 3): Promise<boolean> {
  const calls = listCalls()
  for (let i = 0; i < times; i++) assert.equal((await get(url, path)).text, list)
  return listCalls() === calls
}

test('a large list is served from its file while its version is current, with the same bytes and headers', async () => {
  const url = await frontWith()
  const first = await get(url, '/api/blog?count=exact')
  assert.equal(first.status, 200)
  assert.equal(first.text, list)
  // Held as soon as the first answer ended: the very next request reads the file.
  const held = await heldAnswer(url, '/api/blog?count=exact')
  assert.equal(held.status, 200)
  assert.equal(held.headers.etag, first.headers.etag)
  assert.equal(held.headers['x-total-count'], '7')
  assert.equal(held.headers['content-type'], first.headers['content-type'])
  assert.equal(held.headers['content-length'], String(Buffer.byteLength(list)), 'a held file\'s length is known')
  const samples = parseMetrics((await get(url, '/metrics')).text)
  assert.equal(valueOf(samples, 'blog_read_api_front_cache_disk_lists'), 1)
  assert.equal(valueOf(samples, 'blog_read_api_front_cache_disk_bytes'), Buffer.byteLength(list))
  const calls = listCalls()
  const versionReads = upstream.requests.filter((req) => req.url === VERSION_PATH).length
  const conditional = await get(url, '/api/blog?count=exact', { 'if-none-match': String(first.headers.etag) })
  assert.equal(conditional.status, 304)
  assert.equal(listCalls(), calls)
  assert.ok(upstream.requests.filter((req) => req.url === VERSION_PATH).length > versionReads, 'each answer confirms the version first')
})

test('once the version moves, the list is asked for again and the new one replaces the file', async () => {
  const directories = new Set(filesDirectories())
  const url = await frontWith()
  await askedThenHeld(url, '/api/blog')
  version = 'v2'
  list = listOf(20_000, 'b')
  const calls = listCalls()
  const moved = await get(url, '/api/blog')
  assert.equal(moved.text, list, 'the new list at once')
  assert.equal(listCalls(), calls + 1)
  assert.equal(moved.headers.etag, '"L-v2"')
  await heldAnswer(url, '/api/blog')
  await pollUntil('the replaced file removed', () => filesIn(directories) === 1)
})

test('a list whose upstream body broke is never held: the next request asks again', async () => {
  const directories = new Set(filesDirectories())
  const url = await frontWith()
  cutOff = true
  for (let i = 0; i < 3; i++) {
    await assert.rejects(async () => await (await request(`${url}/api/blog`)).body.text())
  }
  cutOff = false
  await askedAgainThenHeldAlone(url, directories, 'asked again after the breaks')
})

test('a list whose client left before its end is not held', async () => {
  const directories = new Set(filesDirectories())
  const url = await frontWith()
  list = listOf(400_000, 'c')
  holdEnd = true
  const response = await request(`${url}/api/blog`)
  // Read a little, then leave, while the upstream holds the rest back.
  const chunks = response.body[Symbol.asyncIterator]()
  assert.ok(((await chunks.next()).value as Buffer).length > 0)
  response.body.destroy()
  const held = await pollUntil('the upstream answer holding its end', () => heldEnds.shift())
  // The relay notices its client left at a chunk that follows, and lets go of the upstream answer.
  let sent = BUFFER_LIMIT * 2
  await pollUntil('the front letting go of the upstream answer', () => {
    if (held.req.socket.destroyed) return true
    held.write(list.slice(sent, sent += 1000))
    return undefined
  })
  held.end()
  holdEnd = false
  list = listOf(20_000, 'c')
  await askedAgainThenHeldAlone(url, directories, 'the list left before its end was held')
})

test('no file without a version to confirm it, none over the budget, none at 0', async () => {
  const directories = new Set(filesDirectories())
  const url = await frontWith()
  version = undefined
  await get(url, '/api/blog')
  assert.equal(await servedHeld(url, '/api/blog'), false, 'an unversioned list was served from a file')
  version = 'v1'
  list = listOf(DISK_BYTES * 2, 'd')
  await get(url, '/api/blog')
  assert.equal(await servedHeld(url, '/api/blog'), false, 'a list over the budget was served from a file')
  await pollUntil('the files of lists over the budget removed', () => filesIn(directories) === 0)
  const off = await frontWith(0)
  await get(off, '/api/blog')
  assert.equal(await servedHeld(off, '/api/blog'), false, 'CACHE_DISK_MAX_MB=0 held a file')
})

test('the least recently used list goes first when the budget is reached', async () => {
  const directories = new Set(filesDirectories())
  const url = await frontWith()
  // Three lists of 20 KB each in 64 KB: all held. A fourth evicts the least recently used.
  for (const tag of ['a', 'b', 'c']) await askedThenHeld(url, `/api/blog?tag=${tag}`)
  await heldAnswer(url, '/api/blog?tag=a')
  await askedThenHeld(url, '/api/blog?tag=d')
  assert.equal(await servedHeld(url, '/api/blog?tag=a', 1), true, 'the list used last was evicted')
  assert.equal(await servedHeld(url, '/api/blog?tag=b', 1), false, 'the least recently used was kept')
  await pollUntil('the evicted files removed', () => filesIn(directories) === 3)
})

test('a held file written to from outside still answers the bytes held, with their length', async () => {
  const directories = new Set(filesDirectories())
  const url = await frontWith()
  await askedThenHeld(url, '/api/blog')
  const [own] = filesDirectories().filter((name) => !directories.has(name))
  const [file] = readdirSync(join(tmpdir(), own ?? ''))
  appendFileSync(join(tmpdir(), own ?? '', file ?? ''), ',"more"]')
  // Every byte the front writes, read off the socket: nothing past the length it announced.
  const { port } = new URL(url)
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write('GET /api/blog HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
    const chunks: Buffer[] = []
    socket.on('data', (chunk: Buffer) => chunks.push(chunk)).on('error', reject).on('close', () => resolve(Buffer.concat(chunks).toString()))
  })
  const [head, body] = raw.split('\r\n\r\n')
  assert.match(head ?? '', new RegExp(`\r\ncontent-length: ${Buffer.byteLength(list)}\r\n`, 'i'))
  assert.equal(body, list)
})

test('a file removed from outside is asked for again, and the directory is removed when the front closes', async () => {
  const before = new Set(filesDirectories())
  const url = await frontWith()
  await askedThenHeld(url, '/api/blog')
  const own = filesDirectories().filter((name) => !before.has(name))
  assert.equal(own.length, 1, 'one directory of the front\'s own')
  rmSync(`${tmpdir()}/${own[0]}`, { recursive: true, force: true })
  const calls = listCalls()
  assert.equal((await get(url, '/api/blog')).text, list)
  assert.equal(listCalls(), calls + 1, 'asked again')
  // That answer found no directory to write in; the next makes one again, and is held.
  await askedThenHeld(url, '/api/blog')
  for (const front of fronts.splice(0)) await front.app.close()
  assert.deepEqual(filesDirectories().filter((name) => !before.has(name)), [], 'the directory outlived the front')
})
