// 1,000 idle subscribers of a real front's change stream (the front alone in a child process,
// as the executable configures it): the post API holds one stream for all of them, the front's
// memory grows by a bounded amount per subscriber (measured after a full collection), and each
// subscriber gets the next change.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { postsAppOptions } from '../../src/process/tier-options.js'
import { testConfig } from '../helpers/config.js'
import { createSeededSqlite, openTestStore } from '../helpers/databases.js'
import { pollUntil } from '../helpers/poll.js'
import { openStreamClient } from '../helpers/sse-client.js'
import { listen, silentLogger } from '../helpers/tiers.js'

const SUBSCRIBERS = 1000

type Memory = NodeJS.MemoryUsage

test('1,000 idle subscribers of a real front: one upstream stream, bounded memory per subscriber, each gets the change', { timeout: 120_000 }, async (t) => {
  const database = await createSeededSqlite()
  t.after(() => database.drop())
  const store = await openTestStore(database.location)
  await store.checkSchema()
  const app = buildPostsApp(postsAppOptions(testConfig(), { store, logger: silentLogger }))
  let streams = 0
  let open = 0
  app.addHook('onRequest', (request, reply, done) => {
    if (request.url.startsWith('/api/posts/changes') && request.headers.accept === 'text/event-stream') {
      streams++
      open++
      reply.raw.once('close', () => open--)
    }
    done()
  })
  const posts = await listen(app)
  t.after(async () => { await posts.app.close(); await store.close() })

  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('fixtures/front-server.ts', import.meta.url))], {
    env: { ...process.env, UPSTREAM_URL: posts.url },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc']
  })
  t.after(() => child.kill('SIGTERM'))
  assert.ok(child.stdout !== null)
  const [line] = await once(child.stdout, 'data') as [Buffer]
  const port = Number(/listening (\d+)/.exec(line.toString())?.[1])
  const memory = async (): Promise<Memory> => {
    const answer = once(child, 'message') as Promise<[Memory]>
    child.send('memory')
    return (await answer)[0]
  }

  // Warm the paths up with one subscriber, then measure with none: the upstream stream closed too.
  const warm = await openStreamClient(`http://127.0.0.1:${port}/api/changes`)
  await warm.waitFor((event) => event.lastEventId !== '')
  warm.close()
  await pollUntil('the front closed its upstream stream', () => open === 0)
  const before = await memory()

  const received = Array.from({ length: SUBSCRIBERS }, () => '')
  const sockets = Array.from({ length: SUBSCRIBERS }, (_, i) => {
    const socket = connect(port, '127.0.0.1')
    socket.setEncoding('utf8')
    socket.on('data', (text: string) => { received[i] += text })
    socket.write('GET /api/changes HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n')
    return socket
  })
  t.after(() => { for (const socket of sockets) socket.destroy() })
  await pollUntil('every subscriber told where it joined', () => received.every((text) => text.startsWith('HTTP/1.1 200') && /\nid: [\w-]{22}\n\n/.test(text)), { withinMs: 60_000, everyMs: 100 })
  assert.deepEqual({ streams, open }, { streams: 2, open: 1 }, 'one upstream stream for the 1,000 (and one before, for the warm-up)')
  const after = await memory()
  const per = (key: 'heapUsed' | 'external' | 'rss'): number => (after[key] - before[key]) / SUBSCRIBERS
  t.diagnostic(`front, per idle subscriber: heap ${(per('heapUsed') / 1024).toFixed(1)} KiB, external ${(per('external') / 1024).toFixed(1)} KiB, ` +
    `RSS ${(per('rss') / 1024).toFixed(1)} KiB; in all, heap ${((after.heapUsed - before.heapUsed) / 2 ** 20).toFixed(1)} MiB, RSS ${((after.rss - before.rss) / 2 ** 20).toFixed(1)} MiB`)
  assert.ok(per('heapUsed') < 64 * 1024, `heap per subscriber ${per('heapUsed')} bytes`)
  assert.ok(per('external') < 16 * 1024, `external memory per subscriber ${per('external')} bytes`)

  await database.exec("INSERT INTO posts (slug, title, content, tags) VALUES ('for-everyone', 'For everyone', 'Body', '[]')")
  await pollUntil('every subscriber got the change', () => received.every((text) => text.includes('"upserted":["for-everyone"]')), { withinMs: 30_000, everyMs: 100 })
})
