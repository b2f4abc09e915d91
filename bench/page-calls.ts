// The front's pages from a keyed list in one process, without HTTP: the cache's list call for
// pages at random depths of a synthetic 100,000-post keyed list, confirmed by an upstream stub
// that answers at once. Its own wall time per page is printed, but the figure to compare is the
// process's instructions under callgrind: with `--single-threaded` nothing here depends on timing,
// so identical runs count nearly the same (the whole run: subtract a run with `--pages 0`).
//   npm run build && valgrind --tool=callgrind node --single-threaded --import tsx bench/page-calls.ts [--pages N] [--dist DIR]
import { resolve } from 'node:path'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import type { createUpstreamCache as CreateUpstreamCache } from '../src/front/cache/upstream-cache.js'
import type { encodeCursor as EncodeCursor } from '../src/contract/cursor.js'
import type { parseListQuery as ParseListQuery } from '../src/contract/list-query.js'
import type { UpstreamClient } from '../src/front/upstream/client.js'
import { createRandom } from './random.js'
import { PAGE_PATH } from './scenarios.js'

const { values } = parseArgs({
  options: {
    /** Pages measured (a quarter as many again warm up first). */
    pages: { type: 'string', default: '24000' },
    /** The build to measure (another build kept aside, for an A/B). */
    dist: { type: 'string', default: 'dist' }
  }
})
const pages = Number(values.pages)
const dist = pathToFileURL(resolve(values.dist)).href
const { createUpstreamCache } = await import(`${dist}/front/cache/upstream-cache.js`) as { createUpstreamCache: typeof CreateUpstreamCache }
const { encodeCursor } = await import(`${dist}/contract/cursor.js`) as { encodeCursor: typeof EncodeCursor }
const { parseListQuery } = await import(`${dist}/contract/list-query.js`) as { parseListQuery: typeof ParseListQuery }

const POSTS = 100_000
const CONCURRENT = 50
const cursors: string[] = []
const lines: string[] = []
for (let i = 0; i < POSTS; i++) {
  const slug = `post-${String(i).padStart(6, '0')}`
  const publishedAt = new Date(Date.UTC(2020, 0, 1) + (POSTS - i) * 60_000).toISOString()
  const cursor = encodeCursor({ slug, publishedAt })
  cursors.push(cursor)
  lines.push(`${cursor} ${JSON.stringify({ slug, title: `Post number ${i}`, published_at: publishedAt })}\n`)
}
const keyedList = Buffer.from(lines.join(''))
const headers = { 'posts-version': 'v1' }
const upstream: UpstreamClient = {
  get: async (path) => ({ status: 200, headers, body: path.includes('keyed') ? keyedList : Buffer.from('[]'), upstream: 'stub' }),
  version: async () => ({ status: 200, version: 'v1' }),
  openStream: async () => { throw new Error('no change stream here') },
  inRotation: () => 1
}
const cache = createUpstreamCache({
  upstream, cacheMaxBytes: 96 * 1024 * 1024, cacheDiskMaxBytes: 0, staleIfErrorS: 0, maxListBytes: 64 * 1024 * 1024, maxPostBytes: 1024 * 1024, listBufferLimit: 64 * 1024 * 1024, indexAfterCalls: 1
})
const urlAfter = (cursor: string): string => `${PAGE_PATH}&after=${cursor}`
// One page call upstream makes the cache fetch and index the keyed list, in the background.
await cache.list(parseListQuery(urlAfter(cursors[0] as string)), 'warm')
while (cache.indexing() > 0) await nextTurn()

// Each measured page after its own random cursor, as under load: a few are asked for twice (and
// then held), most are built.
const random = createRandom(7)
const warmUp = Math.ceil(pages / 4)
const urls = Array.from({ length: warmUp + pages }, () => urlAfter(cursors[Math.floor(random() * (POSTS - 1))] as string))
async function run (from: number, count: number): Promise<number> {
  const start = process.hrtime.bigint()
  for (let i = from; i < from + count; i += CONCURRENT) {
    const batch = urls.slice(i, Math.min(i + CONCURRENT, from + count))
    const outcomes = await Promise.all(batch.map(async (url) => await cache.list(parseListQuery(url), 'page')))
    if (outcomes.some((outcome) => outcome.kind !== 'body' || outcome.body.empty)) throw new Error('a page was not answered from the keyed list')
  }
  return Number(process.hrtime.bigint() - start) / 1000 / Math.max(1, count)
}
if (pages > 0) {
  await run(0, warmUp)
  console.log(`${pages} pages from the keyed list: ${(await run(warmUp, pages)).toFixed(2)} µs each (wall time, this process)`)
}
