// The OpenAPI documents and reference pages of both tiers: valid OpenAPI 3.1,
// complete (every route, parameter, header and problem kind), served with an ETag; the page under
// its own CSP and from this origin only; and the schemas never change the bytes served.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { compileErrors, validate } from '@readme/openapi-parser'
import type { FastifyInstance } from 'fastify'
import { buildPostsApp } from '../../src/posts-api/app.js'
import { ANY_ROUTE_PROBLEMS } from '../../src/http/docs/problem-schema.js'
import { KEYED_LIST_PATH } from '../../src/contract/keyed-list.js'
import { VERSION_PATH } from '../../src/contract/posts-version.js'
import { PROBLEM_TYPE_BASE, PROBLEMS, type ProblemKind } from '../../src/contract/problems.js'
import type { PostStore } from '../../src/store/store.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { freePort } from '../helpers/fake-upstream.js'
import type { OpenApiDocument } from '../helpers/openapi-conformance.js'
import { buildTestFront, listen, silentLogger, type RunningApp } from '../helpers/tiers.js'

type Document = OpenApiDocument & { paths: Record<string, Record<string, { operationId: string, parameters: Array<{ in: string, name: string }> }>> }

// Load shedding is not under test here, and a busy machine must not make these answers 503.
const server = { ...testConfig().server, loadShedDelayMs: 0 }

function postsApp (store: PostStore, apiDocs = true): FastifyInstance {
  return buildPostsApp({ store, logger: silentLogger, cacheControl: testConfig().cacheControl, server, apiDocs })
}

async function documentOf (app: FastifyInstance): Promise<Document> {
  const answer = await app.inject('/openapi.json')
  assert.equal(answer.statusCode, 200)
  return answer.json()
}

/** The problem kinds a document names: by operation and status, and in its components. */
function problemTypes (document: Document): { byOperation: Map<string, Set<ProblemKind>>, all: Set<ProblemKind> } {
  const byOperation = new Map<string, Set<ProblemKind>>()
  const all = new Set<ProblemKind>()
  const kindsIn = (text: string): ProblemKind[] =>
    [...text.matchAll(new RegExp(`"${PROBLEM_TYPE_BASE}([a-z-]+)"`, 'g'))].map((match) => match[1] as ProblemKind)
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const kinds = new Set(kindsIn(JSON.stringify(operation)))
      byOperation.set(`${method.toUpperCase()} ${path}`, kinds)
      for (const kind of kinds) all.add(kind)
    }
  }
  for (const kind of kindsIn(JSON.stringify(document.components.responses))) all.add(kind)
  return { byOperation, all }
}

describe('OpenAPI documents', () => {
  let front: FastifyInstance
  let posts: FastifyInstance
  let frontDocument: Document
  let postsDocument: Document

  before(async () => {
    const store = await openTestStore({ dialect: 'sqlite', filename: ':memory:' }, { writable: true })
    await store.migrate()
    await store.seed()
    posts = postsApp(store)
    posts.addHook('onClose', async () => await store.close())
    // Nothing listens there: the documents never need the upstream.
    front = buildTestFront(new URL(`http://127.0.0.1:${await freePort()}`), { server })
    frontDocument = await documentOf(front)
    postsDocument = await documentOf(posts)
  })
  after(async () => {
    await front?.close()
    await posts?.close()
  })

  test('both are valid OpenAPI 3.1 (@readme/openapi-parser)', async () => {
    for (const document of [frontDocument, postsDocument]) {
      assert.equal(document.openapi, '3.1.0')
      const result = await validate(structuredClone(document) as never)
      assert.ok(result.valid, result.valid ? '' : compileErrors(result))
      assert.deepEqual(result.warnings, [])
    }
  })

  test('every route, GET only (HEAD is GET without its body), with its parameters and request headers', () => {
    for (const [document, list, item, others] of [[frontDocument, '/api/blog', '/api/blog/{slug}', ['/api/tags', '/api/changes', '/feed.atom', '/feed.json', '/feed.xml', '/sitemap-{page}', '/sitemap.xml']], [postsDocument, '/api/posts', '/api/post/{slug}', [VERSION_PATH, KEYED_LIST_PATH, '/api/posts/tags', '/api/posts/changes']]] as const) {
      // And the probes (src/ops/operational-schemas.ts; /metrics too where the tier has metrics).
      assert.deepEqual(Object.keys(document.paths).sort(), [list, item, ...others, '/healthz', '/readyz'].sort())
      assert.deepEqual([document.paths['/healthz']?.get?.operationId, document.paths['/readyz']?.get?.operationId], ['health', 'readiness'])
      assert.deepEqual(Object.keys(document.paths[list] ?? {}), ['get'])
      assert.deepEqual(Object.keys(document.paths[item] ?? {}), ['get'])
      assert.equal(document.paths[list]?.get?.operationId, 'listPosts')
      assert.equal(document.paths[item]?.get?.operationId, 'getPost')
      const parameters = (path: string): string[] => (document.paths[path]?.get?.parameters ?? []).map((p) => `${p.in} ${p.name}`).sort()
      const headers = ['header Accept-Encoding', 'header If-None-Match', 'header X-Request-Id']
      assert.deepEqual(parameters(list), [...headers, ...['after', 'count', 'fields', 'formats', 'highlight', 'limit', 'published_after', 'published_before', 'q', 'sort', 'tag', 'tag_all', 'tag_not', 'updated_after'].map((name) => `query ${name}`)])
      assert.deepEqual(parameters(item), [...headers, 'path slug', 'query fields', 'query formats', 'query preview'])
    }
    assert.deepEqual(Object.keys(postsDocument.paths[VERSION_PATH] ?? {}), ['get'])
    assert.equal(postsDocument.paths[VERSION_PATH]?.get?.operationId, 'getPostsVersion')
    assert.deepEqual(Object.keys(postsDocument.paths[KEYED_LIST_PATH] ?? {}), ['get'])
    assert.equal(postsDocument.paths[KEYED_LIST_PATH]?.get?.operationId, 'getKeyedList')
    for (const [document, path] of [[frontDocument, '/api/changes'], [postsDocument, '/api/posts/changes']] as const) {
      assert.equal(document.paths[path]?.get?.operationId, 'getChanges')
      assert.deepEqual((document.paths[path]?.get?.parameters ?? []).map((p) => `${p.in} ${p.name}`).sort(),
        ['header Accept', 'header Last-Event-ID', 'header X-Request-Id', 'query fields', 'query formats', 'query since'])
    }
  })

  test('the slug parameter says what each tier accepts: the front its SLUG_PATTERN, anchored', async () => {
    const slug = (document: Document, path: string): Record<string, unknown> =>
      (document.paths[path]?.get?.parameters.find((p) => p.in === 'path') as unknown as { schema: Record<string, unknown> }).schema
    assert.deepEqual(slug(frontDocument, '/api/blog/{slug}'), { type: 'string', minLength: 1, maxLength: 200, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' })
    assert.equal(slug(postsDocument, '/api/post/{slug}').pattern, '^[^\\u0000-\\u001f\\u007f]+$')
    const custom = buildTestFront(new URL('http://127.0.0.1:1'), { slugPattern: /[a-z]+_[0-9]+/, server })
    try {
      assert.equal(slug(await documentOf(custom), '/api/blog/{slug}').pattern, '^(?:[a-z]+_[0-9]+)$')
    } finally {
      await custom.close()
    }
  })

  test('every problem kind is documented where it can occur, with its type', () => {
    const front = problemTypes(frontDocument)
    const posts = problemTypes(postsDocument)
    assert.deepEqual(new Set([...front.all, ...posts.all]), new Set(Object.keys(PROBLEMS)), 'every kind of PROBLEMS, in one document or the other')
    const upstream: ProblemKind[] = ['upstream-unreachable', 'upstream-bad-response', 'upstream-unavailable', 'upstream-timeout']
    const expected: Record<string, Map<string, Set<ProblemKind>>> = {}
    const exactly = (kinds: ProblemKind[]): Set<ProblemKind> => new Set([...kinds, ...ANY_ROUTE_PROBLEMS])
    // The probes are never shed under load.
    const probe = (kinds: ProblemKind[]): Set<ProblemKind> => new Set([...kinds, ...ANY_ROUTE_PROBLEMS.filter((kind) => kind !== 'overloaded')])
    const probes: Array<[string, Set<ProblemKind>]> = [['GET /healthz', probe([])], ['GET /readyz', probe(['not-ready'])]]
    expected.front = new Map([
      ['GET /api/blog', exactly(['invalid-query', 'no-posts', ...upstream])],
      ['GET /api/blog/{slug}', exactly(['invalid-slug', 'invalid-query', 'post-not-found', ...upstream])],
      ['GET /api/tags', exactly([...upstream])],
      ...['/feed.xml', '/feed.atom', '/feed.json'].map((path): [string, Set<ProblemKind>] => [`GET ${path}`, exactly(['not-found', 'invalid-query', ...upstream])]),
      ['GET /sitemap.xml', exactly(['not-found', ...upstream])],
      ['GET /sitemap-{page}', exactly(['not-found', ...upstream])],
      ['GET /api/changes', exactly(['invalid-query', 'sync-expired', ...upstream])],
      ...probes
    ])
    expected.posts = new Map([
      ['GET /api/posts', exactly(['invalid-query', 'store-unavailable'])],
      ['GET /api/post/{slug}', exactly(['invalid-slug', 'invalid-query', 'post-not-found', 'store-unavailable'])],
      ['GET /api/posts/version', exactly(['store-unavailable'])],
      ['GET /api/posts/keyed', exactly(['invalid-query', 'store-unavailable'])],
      ['GET /api/posts/tags', exactly(['store-unavailable'])],
      ['GET /api/posts/changes', exactly(['invalid-query', 'sync-expired', 'store-unavailable'])],
      ...probes
    ])
    assert.deepEqual(front.byOperation, expected.front)
    assert.deepEqual(posts.byOperation, expected.posts)
  })

  test('each problem response lists the types of its status only, with an example of each', () => {
    for (const document of [frontDocument, postsDocument]) {
      for (const operations of Object.values(document.paths)) {
        for (const [status, response] of Object.entries(operations.get?.responses ?? {})) {
          const media = response.content?.['application/problem+json'] as { schema: { allOf: [unknown, { properties: { type: { enum: string[] } } }] }, examples: Record<string, unknown> } | undefined
          if (Number(status) < 400) continue
          assert.ok(media !== undefined, `${status} is a problem`)
          const kinds = media.schema.allOf[1].properties.type.enum.map((type) => type.slice(PROBLEM_TYPE_BASE.length) as ProblemKind)
          for (const kind of kinds) assert.equal(PROBLEMS[kind].status, Number(status), kind)
          assert.deepEqual(Object.keys(media.examples), kinds)
        }
      }
    }
  })

  test('the response headers: ETag, X-Request-Id, Cache-Control, Retry-After on 503, Cache-Status at the front', () => {
    const headers = (document: Document, path: string, status: number): Record<string, { required?: boolean }> =>
      document.paths[path]?.get?.responses[status]?.headers as Record<string, { required?: boolean }>
    for (const [document, item] of [[frontDocument, '/api/blog/{slug}'], [postsDocument, '/api/post/{slug}']] as const) {
      assert.equal(headers(document, item, 200).ETag?.required, true)
      assert.equal(headers(document, item, 304).ETag?.required, true)
      assert.equal(headers(document, item, 200)['X-Request-Id']?.required, true)
      assert.equal(headers(document, item, 404)['X-Request-Id']?.required, true)
      assert.equal(headers(document, item, 503)['Retry-After']?.required, true)
      assert.equal(headers(document, item, 400)['Retry-After'], undefined)
    }
    assert.equal(headers(frontDocument, '/api/blog', 200)['Cache-Status']?.required, undefined)
    assert.equal(headers(postsDocument, '/api/posts', 200)['Cache-Status'], undefined)
    // A list streamed from a store that does not track changes has no ETag.
    assert.equal(headers(postsDocument, '/api/posts', 200).ETag?.required, undefined)
    assert.ok(headers(frontDocument, '/api/blog', 502)['Retry-After'] !== undefined, 'while no upstream is in rotation')
  })

  test('served with its ETag (304 when current), the API\'s strict CSP, the same document at /docs/json', async () => {
    for (const app of [front, posts]) {
      const answer = await app.inject('/openapi.json')
      assert.match(String(answer.headers['content-type']), /^application\/json/, answer.body)
      assert.equal(answer.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'")
      const again = await app.inject({ url: '/openapi.json', headers: { 'if-none-match': String(answer.headers.etag) } })
      assert.equal(again.statusCode, 304)
      assert.deepEqual((await app.inject('/docs/json')).json(), answer.json())
      assert.equal((await app.inject({ method: 'POST', url: '/openapi.json' })).statusCode, 405)
    }
  })
})

describe('reference pages', () => {
  let front: FastifyInstance
  before(async () => { front = buildTestFront(new URL(`http://127.0.0.1:${await freePort()}`), { server }) })
  after(async () => { await front?.close() })

  test('/docs has its own CSP (this origin only); the API routes keep default-src \'none\'', async () => {
    for (const url of ['/docs', '/docs/', '/docs/static/swagger-ui-bundle.js', '/docs/static/swagger-initializer.js']) {
      const answer = await front.inject(url)
      assert.equal(answer.statusCode, 200, url)
      const csp = String(answer.headers['content-security-policy'])
      assert.match(csp, /^default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';/, url)
      assert.doesNotMatch(csp, /https?:|\*|unsafe/, url)
    }
    const api = await front.inject('/api/blog/Not_A_Slug')
    assert.equal(api.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'")
  })

  test('the page and its initializer name no other host, and swagger-ui\'s validator badge is off', async () => {
    const page = (await front.inject('/docs')).body
    const initializer = (await front.inject('/docs/static/swagger-initializer.js')).body
    // Comments aside (the initializer's cites a web page).
    for (const text of [page, initializer.replace(/^\s*\/\/.*$/gm, '')]) assert.doesNotMatch(text, /(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i)
    assert.match(initializer, /validatorUrl: null,/)
    for (const src of page.matchAll(/(?:src|href)="([^"]+)"/g)) assert.match(src[1] ?? '', /^\/docs\/static\//)
  })
})

describe('the schemas never change the bytes served', () => {
  let db: TestDatabase
  let store: PostStore
  const running: RunningApp[] = []

  before(async () => {
    db = await sqliteServer.create()
    // Columns the schemas know nothing of, with names and values a serialiser could mangle.
    await db.exec(`CREATE TABLE posts (slug TEXT PRIMARY KEY, "reading time" INTEGER, meta JSON, "constructor" TEXT,
      "ünï" TEXT, flag BOOLEAN, published_at TEXT)`)
    await db.exec(`INSERT INTO posts VALUES ('extra-columns', 7, '{"deep":{"list":[1,"two",null]},"n":1e3}', 'p', 'çà', 1, '2026-01-01T00:00:00Z'),
      ('second', NULL, 'not json', NULL, NULL, 0, NULL)`)
    store = await openTestStore(db.location)
    await store.checkSchema()
  })
  after(async () => {
    for (const app of running) await app.app.close()
    await store?.close()
    await db?.drop()
  })

  test('a post with extra columns, and the list, are the same bytes with and without the docs, on both tiers', async () => {
    const withDocs = await listen(postsApp(store, true))
    const withoutDocs = await listen(postsApp(store, false))
    running.push(withDocs, withoutDocs)
    assert.equal((await withoutDocs.app.inject('/openapi.json')).statusCode, 404)
    assert.equal((await withoutDocs.app.inject('/docs')).statusCode, 404)
    const fronts = [
      await listen(buildTestFront(new URL(withDocs.url), { server })),
      await listen(buildTestFront(new URL(withoutDocs.url), { apiDocs: false, server }))
    ]
    running.push(...fronts)
    const expectedPost = '{"slug":"extra-columns","reading time":7,"meta":{"deep":{"list":[1,"two",null]},"n":1000},"constructor":"p","ünï":"çà","flag":true,"published_at":"2026-01-01T00:00:00Z"}'
    for (const [[a, b], list, item] of [[[withDocs, withoutDocs], '/api/posts', '/api/post/extra-columns'], [fronts, '/api/blog', '/api/blog/extra-columns']] as const) {
      const raw = async (tier: RunningApp, path: string): Promise<Buffer> => (await tier.app.inject(path)).rawPayload
      assert.equal((await raw(a, item)).toString('utf8'), expectedPost)
      assert.deepEqual(await raw(a, item), await raw(b, item))
      assert.deepEqual(await raw(a, list), await raw(b, list))
      assert.match((await raw(a, list)).toString('utf8'), /^\[\{"slug":"extra-columns",.*\},\{"slug":"second","reading time":null,"meta":"not json"/)
    }
  })
})
