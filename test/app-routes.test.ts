// Both tiers' routes as a client meets them, through `app.inject()` (no socket behaviour under
// test): unknown paths, other methods with and without a body, and the headers on each answer.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildPostsApp } from '../src/posts-api/app.js'
import { openTestStore } from './helpers/databases.js'
import { testConfig } from './helpers/config.js'
import { freePort } from './helpers/fake-upstream.js'
import { fromInject } from './helpers/http.js'
import { assertProblem } from './helpers/problem.js'
import { buildTestFront, silentLogger } from './helpers/tiers.js'

const OTHER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const
const WITH_BODY = { payload: '{"title":"x"}', headers: { 'content-type': 'application/json' } }

/**
 * The cases every tier answers the same way, at its own two routes. `answered` is a GET the tier
 * answers by itself (the front's upstream is never there).
 */
function sharedRouteCases (tier: () => FastifyInstance, [list, item]: [string, string], answered: string, unknown: string[]): void {
  test('other methods are 405 with Allow: GET, HEAD, with or without a body', async () => {
    for (const url of [list, item]) {
      for (const method of OTHER_METHODS) {
        for (const body of [{}, WITH_BODY]) {
          const answer = await tier().inject({ method, url, ...body })
          assertProblem(fromInject(answer), 'method-not-allowed')
          assert.equal(answer.headers.allow, 'GET, HEAD', `${method} ${url}`)
        }
      }
    }
  })

  test('unknown paths are 404, with or without a body', async () => {
    for (const url of unknown) {
      assertProblem(fromInject(await tier().inject({ method: 'GET', url })), 'not-found')
      assertProblem(fromInject(await tier().inject({ method: 'POST', url, ...WITH_BODY })), 'not-found')
    }
  })

  test('GET with a body is 413 body-not-allowed', async () => {
    for (const url of [list, item]) assertProblem(fromInject(await tier().inject({ method: 'GET', url, ...WITH_BODY })), 'body-not-allowed')
  })

  test('HEAD answers like GET, without a body', async () => {
    const head = await tier().inject({ method: 'HEAD', url: answered })
    const get = await tier().inject({ method: 'GET', url: answered })
    assert.equal(head.statusCode, get.statusCode)
    assert.equal(head.headers['content-type'], get.headers['content-type'])
    assert.ok(get.body.length > 0)
    assert.equal(head.body, '')
  })

  test('security headers and the request id on successes and problems alike', async () => {
    for (const url of [answered, unknown[0] ?? '/']) {
      const answer = await tier().inject({ method: 'GET', url, headers: { 'x-request-id': 'route-test-1' } })
      assert.equal(answer.headers['x-content-type-options'], 'nosniff', url)
      assert.equal(answer.headers['x-frame-options'], 'DENY', url)
      assert.equal(answer.headers['x-request-id'], 'route-test-1', url)
      assert.equal(answer.headers['x-powered-by'], undefined, url)
    }
  })
}

describe('post API', () => {
  let app: FastifyInstance
  before(async () => {
    const store = await openTestStore({ dialect: 'sqlite', filename: ':memory:' }, { writable: true })
    await store.migrate()
    await store.seed()
    const config = testConfig()
    app = buildPostsApp({ store, logger: silentLogger, cacheControl: config.cacheControl, server: config.server })
    app.addHook('onClose', async () => await store.close())
  })
  after(async () => await app.close())

  sharedRouteCases(() => app, ['/api/posts', '/api/post/hello-world'], '/api/posts', ['/api/post', '/api/posts/x', '/api/blog'])

  test('a slug longer than SLUG_MAX_LENGTH is the route\'s invalid-slug, not the router\'s', async () => {
    const body = assertProblem(fromInject(await app.inject({ method: 'GET', url: `/api/post/${'a'.repeat(201)}` })), 'invalid-slug')
    assert.match(String(body.detail), /1 to 200 characters/)
  })
})

describe('front API', () => {
  let app: FastifyInstance
  before(async () => {
    // Nothing listens there: none of these cases may reach the upstream.
    app = buildTestFront(new URL(`http://127.0.0.1:${await freePort()}`))
  })
  after(async () => await app.close())

  sharedRouteCases(() => app, ['/api/blog', '/api/blog/hello-world'], '/api/blog/Not_A_Slug', ['/api/blogs', '/api/blog/a/b', '/'])

  test('a slug longer than SLUG_MAX_LENGTH is the route\'s invalid-slug, not the router\'s', async () => {
    const body = assertProblem(fromInject(await app.inject({ method: 'GET', url: `/api/blog/${'a'.repeat(201)}` })), 'invalid-slug')
    assert.match(String(body.detail), /1 to 200 lower-case/)
  })

  test('with CORS on, problems carry Access-Control-Allow-Origin too, and OPTIONS is a preflight', async () => {
    const headers = { origin: 'https://reader.example' }
    for (const answer of [
      await app.inject({ method: 'POST', url: '/api/blog', headers: { ...headers, ...WITH_BODY.headers }, payload: WITH_BODY.payload }),
      await app.inject({ method: 'GET', url: '/api/blogs', headers })
    ]) {
      assert.ok(answer.statusCode === 405 || answer.statusCode === 404)
      assert.equal(answer.headers['access-control-allow-origin'], '*')
    }
    const preflight = await app.inject({ method: 'OPTIONS', url: '/api/blog', headers: { ...headers, 'access-control-request-method': 'GET' } })
    assert.equal(preflight.statusCode, 204)
  })
})
