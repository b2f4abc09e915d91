// What a tier loads at start, in a process of its own (this one has loaded everything already):
// neither the reference page's modules (@fastify/swagger-ui, @fastify/static) nor markdown-it,
// which would lengthen every start; the first /docs request loads the former, and the first
// rendered read the latter. The post API loads undici only to deliver a webhook: without
// webhooks, never.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { test } from 'node:test'

const at = (path: string): string => JSON.stringify(import.meta.resolve(path))

// The modules of these packages in the CommonJS cache (each is CommonJS, or required as such).
const CHILD = `
import { createRequire } from 'node:module'
const cache = createRequire(import.meta.url).cache
const loaded = () => ['@fastify/swagger-ui', '@fastify/static', 'markdown-it', 'undici'].filter((name) => Object.keys(cache).some((file) => file.includes('/node_modules/' + name + '/')))
const { buildPostsApp } = await import(${at('../../src/posts-api/app.ts')})
const { testConfig } = await import(${at('../helpers/config.ts')})
const { createCountingStore } = await import(${at('../helpers/counting-store.ts')})
// Not the helpers that start tiers, which load the front (and undici) too.
const { pino } = await import('pino')
const silentLogger = pino({ level: 'silent' })
const store = createCountingStore([{ slug: 'hello', title: 'Hello', content: '# Hello *world*' }])
const app = buildPostsApp({ store, logger: silentLogger, cacheControl: 'no-cache', server: testConfig().server })
await app.ready()
const atStart = loaded()
const docs = (await app.inject('/docs')).statusCode
const afterDocs = loaded()
const rendered = (await app.inject('/api/post/hello?formats=html')).json().content_html
const afterRendering = loaded()
await app.close()
console.log(JSON.stringify({ atStart, docs, afterDocs, rendered, afterRendering }))
`

test('a tier starts without the reference page\'s modules or markdown-it; the first request for each loads them; the post API without webhooks never loads undici', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), '--input-type=module', '-e', CHILD], { cwd: import.meta.dirname })
  assert.deepEqual(JSON.parse(stdout), {
    atStart: [],
    docs: 200,
    afterDocs: ['@fastify/swagger-ui', '@fastify/static'],
    rendered: '<h1 id="hello-world">Hello <em>world</em></h1>\n',
    afterRendering: ['@fastify/swagger-ui', '@fastify/static', 'markdown-it']
  })
})
