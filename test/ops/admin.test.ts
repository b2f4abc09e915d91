// Where the operational routes are, as users start the executable (needs `npm run build`):
// /metrics on each tier's port by default; with ADMIN_PORT, on a listener of its own that also
// answers the probes for all the process's tiers, the tiers keeping theirs; METRICS=off, nowhere.
// And, in process, the admin listener's readiness (every tier's own) and mistakes in these settings;
// the executable once more for such a mistake's one line.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { startAdmin, tiersReadiness } from '../../src/ops/admin.js'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { runCli, runCliHere, startCli } from '../helpers/cli.js'
import { testConfig } from '../helpers/config.js'
import { createCountingStore } from '../helpers/counting-store.js'
import { freePort } from '../helpers/fake-upstream.js'
import { get } from '../helpers/http.js'
import { parseMetrics, samplesOf } from '../helpers/metrics-text.js'
import { assertProblem } from '../helpers/problem.js'
import { silentLogger } from '../helpers/tiers.js'

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-admin-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const TIER_PORTS = ['--blog-port', '0', '--posts-port', '0']

test('by default, /metrics on both tiers\' ports: the process\'s metrics, both tiers in one exposition', async () => {
  const running = await startCli(['serve', ...TIER_PORTS], {}, ['front', 'posts'], mkdtempSync(join(dir, 'default-')))
  try {
    const { front = '', posts = '' } = running.urls
    assert.equal((await get(front, '/api/blog/hello-world')).status, 200)
    for (const base of [front, posts]) {
      const scrape = await get(base, '/metrics')
      assert.equal(scrape.status, 200)
      const tiers = samplesOf(parseMetrics(scrape.text), 'blog_read_api_http_request_duration_seconds_count').map((s) => s.labels.tier)
      assert.deepEqual([...new Set(tiers)].sort(), ['front', 'posts-api'])
      for (const path of ['/healthz', '/readyz']) assert.equal((await get(base, path)).status, 200)
    }
  } finally {
    assert.equal(await running.stop(), 0)
  }
})

test('with ADMIN_PORT: /metrics and the probes there, the probes still on the tiers\' ports, /metrics not', async () => {
  const adminPort = await freePort()
  const running = await startCli(['serve', ...TIER_PORTS, '--admin-port', String(adminPort)], {}, ['front', 'posts'], mkdtempSync(join(dir, 'admin-')))
  const admin = `http://127.0.0.1:${adminPort}`
  try {
    const { front = '', posts = '' } = running.urls
    assert.equal((await get(front, '/api/blog/hello-world')).status, 200)
    const scrape = await get(admin, '/metrics')
    assert.equal(scrape.status, 200)
    assert.ok(samplesOf(parseMetrics(scrape.text), 'blog_read_api_upstream_call_duration_seconds_count', { outcome: 'ok' })[0]?.value === 1)
    for (const path of ['/healthz', '/readyz']) {
      for (const base of [admin, front, posts]) assert.equal((await get(base, path)).status, 200, `${base}${path}`)
    }
    for (const base of [front, posts]) assertProblem(await get(base, '/metrics'), 'not-found')
    assertProblem(await get(admin, '/api/blog'), 'not-found')
  } finally {
    assert.equal(await running.stop(), 0, 'the admin listener closes with the tiers')
  }
})

test('METRICS=off: no /metrics anywhere, the probes as before', async () => {
  const adminPort = await freePort()
  const running = await startCli(['serve', ...TIER_PORTS], { METRICS: 'off', ADMIN_PORT: String(adminPort) }, ['front', 'posts'], mkdtempSync(join(dir, 'off-')))
  try {
    const { front = '', posts = '' } = running.urls
    for (const base of [front, posts, `http://127.0.0.1:${adminPort}`]) {
      assertProblem(await get(base, '/metrics'), 'not-found')
      assert.equal((await get(base, '/readyz')).status, 200)
    }
  } finally {
    assert.equal(await running.stop(), 0)
  }
})

test('bad METRICS or ADMIN_PORT values stop start-up with one line naming the setting, exit 2', async () => {
  for (const [env, pattern] of [[{ METRICS: 'maybe' }, /^blog-read-api: invalid METRICS: expected 'on' or 'off'\n$/], [{ ADMIN_PORT: 'x' }, /^blog-read-api: invalid ADMIN_PORT: [^\n]+\n$/]] as const) {
    const { code, stdout, stderr } = await runCliHere(['serve'], env)
    assert.equal(code, 2)
    assert.equal(stdout, '')
    assert.match(stderr, pattern)
  }
})

test('the executable itself: a bad METRICS is one line on stderr, nothing on stdout, exit 2, no stack trace', async () => {
  const { code, stdout, stderr } = await runCli(['serve'], { METRICS: 'maybe' })
  assert.equal(code, 2)
  assert.equal(stdout, '')
  assert.match(stderr, /^blog-read-api: invalid METRICS: expected 'on' or 'off'\n$/)
})

test('the admin listener is ready when every tier is, and says which is not', async () => {
  const server = testConfig().server
  const ready = buildPostsApp({ store: createCountingStore([]), logger: silentLogger, cacheControl: 'no-cache', server })
  const notReady = buildPostsApp({ store: createCountingStore([]), logger: silentLogger, cacheControl: 'no-cache', server, ready: () => ({ ready: false, reason: 'The post store is not answering.' }) })
  const admin = await startAdmin({ host: '127.0.0.1', port: 0, server, logger: silentLogger, tiers: [{ name: 'front', app: ready }, { name: 'post API', app: notReady }], metrics: undefined })
  try {
    const problem = assertProblem(await get(`http://127.0.0.1:${(admin.server.address() as { port: number }).port}`, '/readyz'), 'not-ready')
    assert.equal(problem.detail, 'The post API is not ready: The post store is not answering.')
    assert.deepEqual(await tiersReadiness([{ name: 'front', app: ready }])(), { ready: true })
    await ready.close()
    const closed = await tiersReadiness([{ name: 'front', app: ready }])()
    assert.equal(closed.ready, false, 'a closed tier is not ready')
  } finally {
    await admin.close()
    await notReady.close()
  }
})
