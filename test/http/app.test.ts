// What both tiers share (src/http/app.ts), route by route through `app.inject()`: no socket
// behaviour is under test here (raw bytes, time-outs and faults are in test/front/*).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildHttpApp, type HttpAppOptions } from '../../src/http/app.js'
import { ProblemError } from '../../src/contract/problems.js'
import { testConfig } from '../helpers/config.js'
import { fromInject } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { listen, silentLogger } from '../helpers/tiers.js'
import type { Lane } from '../../src/http/fast-lane.js'
import { logSink } from '../helpers/log-sink.js'

/** A base app with one list route and one item route, as each tier has. */
function buildApp (options: Partial<HttpAppOptions> = {}): FastifyInstance {
  const app = buildHttpApp({ ...testConfig().server, logger: silentLogger, routes: ['/items', '/items/:id'], corsOrigins: [], ...options })
  app.get('/items', async () => ({ items: [] }))
  app.get<{ Params: { id: string } }>('/items/:id', async (request) => {
    if (request.params.id === 'problem') throw new ProblemError('store-unavailable', 'Down for a while.', { retryAfter: 3 })
    if (request.params.id === 'defect') throw new TypeError('x is undefined')
    return { id: request.params.id }
  })
  return app
}

const BODIES = {
  small: { payload: 'hello', headers: { 'content-type': 'text/plain' } },
  'over the body limit': { payload: 'x'.repeat(64 * 1024), headers: { 'content-type': 'text/plain' } },
  'JSON of an unparsable kind': { payload: '{', headers: { 'content-type': 'application/json' } },
  'of an unknown content type': { payload: 'x', headers: { 'content-type': 'application/x-unknown' } }
} as const

test('a method the route does not have is 405 with Allow, whatever the body: the method decides before the content', async () => {
  const app = buildApp()
  try {
    for (const url of ['/items', '/items/a']) {
      for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
        const answers = [await app.inject({ method, url }), ...await Promise.all(Object.values(BODIES).map((body) => app.inject({ method, url, ...body })))]
        for (const answer of answers) {
          assertProblem(fromInject(answer), 'method-not-allowed')
          assert.equal(answer.headers.allow, 'GET, HEAD')
        }
      }
    }
  } finally {
    await app.close()
  }
})

test('an unknown path is 404, whatever the method or the body', async () => {
  const app = buildApp()
  try {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      assertProblem(fromInject(await app.inject({ method, url: '/nowhere' })), 'not-found')
      for (const body of Object.values(BODIES)) assertProblem(fromInject(await app.inject({ method, url: '/nowhere', ...body })), 'not-found')
    }
  } finally {
    await app.close()
  }
})

test('GET with a body is 413 body-not-allowed and the connection is closed (the body is never read)', async () => {
  const app = buildApp()
  try {
    for (const body of Object.values(BODIES)) {
      const answer = await app.inject({ method: 'GET', url: '/items/a', ...body })
      assertProblem(fromInject(answer), 'body-not-allowed')
      assert.equal(answer.headers.connection, 'close')
    }
    const empty = await app.inject({ method: 'GET', url: '/items/a', headers: { 'content-length': '0' } })
    assert.equal(empty.statusCode, 200, 'Content-Length: 0 is no body')
  } finally {
    await app.close()
  }
})

test('with CORS on, OPTIONS with Origin and Access-Control-Request-Method is a preflight; any other OPTIONS is a method like the others', async () => {
  const app = buildApp({ corsOrigins: ['https://reader.example'] })
  try {
    const asked = { origin: 'https://reader.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'if-none-match' }
    const preflight = await app.inject({ method: 'OPTIONS', url: '/items/a', headers: asked })
    assert.equal(preflight.statusCode, 204)
    assert.equal(preflight.headers['access-control-allow-origin'], 'https://reader.example')
    assert.equal(preflight.headers['access-control-allow-methods'], 'GET, HEAD')
    assert.equal(preflight.headers['access-control-allow-headers'], 'if-none-match')
    assert.equal(preflight.headers.vary, 'Origin, Access-Control-Request-Headers')
    assert.equal(preflight.headers['x-request-id'] !== undefined, true)
    // Not a preflight: without Origin, without the method asked for, or from an origin not listed.
    for (const headers of [{ 'access-control-request-method': 'GET' }, { origin: 'https://reader.example' }, {}]) {
      const answer = await app.inject({ method: 'OPTIONS', url: '/items', headers })
      assertProblem(fromInject(answer), 'method-not-allowed')
      assert.equal(answer.headers.allow, 'GET, HEAD')
    }
    const stranger = await app.inject({ method: 'OPTIONS', url: '/items', headers: { ...asked, origin: 'https://elsewhere.example' } })
    assert.equal(stranger.statusCode, 204)
    assert.equal(stranger.headers['access-control-allow-origin'], undefined, 'an origin not listed is not allowed')
    assertProblem(fromInject(await app.inject({ method: 'OPTIONS', url: '/nowhere', headers: asked })), 'not-found')
  } finally {
    await app.close()
  }
})

test('with a list of origins, a listed one is echoed and every answer varies on Origin', async () => {
  const app = buildApp({ corsOrigins: ['https://reader.example'] })
  try {
    const listed = await app.inject({ method: 'GET', url: '/nowhere', headers: { origin: 'https://reader.example' } })
    assert.equal(listed.headers['access-control-allow-origin'], 'https://reader.example')
    assert.equal(listed.headers.vary, 'Origin')
    assert.match(String(listed.headers['access-control-expose-headers']), /X-Request-Id/)
    const other = await app.inject({ method: 'GET', url: '/items', headers: { origin: 'https://elsewhere.example' } })
    assert.equal(other.headers['access-control-allow-origin'], undefined)
    assert.equal(other.headers.vary, 'Origin')
  } finally {
    await app.close()
  }
})

test('without CORS, OPTIONS is 405 like any other method and no CORS header is sent', async () => {
  const app = buildApp()
  try {
    const answer = await app.inject({ method: 'OPTIONS', url: '/items', headers: { origin: 'https://reader.example', 'access-control-request-method': 'GET' } })
    assertProblem(fromInject(answer), 'method-not-allowed')
    assert.equal(answer.headers['access-control-allow-origin'], undefined)
  } finally {
    await app.close()
  }
})

test('extension methods Node knows (PROPFIND, PURGE, SEARCH…) are 405 on a route and 404 elsewhere, before any body', async () => {
  const app = buildApp()
  try {
    for (const method of ['PROPFIND', 'PROPPATCH', 'MKCOL', 'LOCK', 'UNLOCK', 'PURGE', 'SEARCH', 'REPORT', 'TRACE', 'COPY', 'MOVE', 'QUERY', 'M-SEARCH']) {
      for (const body of [{}, BODIES.small]) {
        const answer = await app.inject({ method: method as 'GET', url: '/items/a', ...body })
        assertProblem(fromInject(answer), 'method-not-allowed')
        assert.equal(answer.headers.allow, 'GET, HEAD', method)
        assertProblem(fromInject(await app.inject({ method: method as 'GET', url: '/nowhere', ...body })), 'not-found')
      }
    }
  } finally {
    await app.close()
  }
})

test('Expect other than 100-continue is 417 after 404/405, and before 413; Content-Length zero in any spelling is no body', async () => {
  const app = buildApp()
  try {
    assertProblem(fromInject(await app.inject({ method: 'GET', url: '/items', headers: { expect: 'foo' } })), 'expectation-failed')
    assertProblem(fromInject(await app.inject({ method: 'GET', url: '/items', payload: 'hello', headers: { expect: 'foo', 'content-type': 'text/plain' } })), 'expectation-failed')
    assertProblem(fromInject(await app.inject({ method: 'GET', url: '/nowhere', headers: { expect: 'foo' } })), 'not-found')
    assertProblem(fromInject(await app.inject({ method: 'DELETE', url: '/items', headers: { expect: 'foo' } })), 'method-not-allowed')
    assert.equal((await app.inject({ method: 'GET', url: '/items', headers: { expect: '100-continue' } })).statusCode, 200)
    for (const zero of ['0', '00', '000']) {
      assert.equal((await app.inject({ method: 'GET', url: '/items', headers: { 'content-length': zero } })).statusCode, 200, zero)
    }
    const answer = await app.inject({ method: 'GET', url: '/items', ...BODIES.small })
    assertProblem(fromInject(answer), 'body-not-allowed')
    assert.equal(answer.headers.allow, 'GET, HEAD', 'a 413 says which methods there are')
  } finally {
    await app.close()
  }
})

test('every problem has the same content type, without parameters', async () => {
  const app = buildApp()
  try {
    for (const [method, url] of [['GET', '/nowhere'], ['POST', '/items'], ['GET', '/items/problem'], ['GET', '/items/defect'], ['GET', '/items/%zz']] as const) {
      const answer = await app.inject({ method, url })
      assert.equal(answer.headers['content-type'], 'application/problem+json', `${method} ${url}`)
    }
  } finally {
    await app.close()
  }
})

test('a path parameter longer than the router allows is a generic 400, not a route\'s own problem', async () => {
  const app = buildApp()
  try {
    const answer = fromInject(await app.inject({ method: 'GET', url: `/items/${'a'.repeat(20_000)}` }))
    const body = assertProblem(answer, 'bad-request')
    assert.match(String(body.detail), /path segment is longer than 16384 characters/)
    // Anything shorter reaches the route, which judges it itself.
    assert.equal((await app.inject({ method: 'GET', url: `/items/${'a'.repeat(16_000)}` })).statusCode, 200)
    assertProblem(fromInject(await app.inject({ method: 'GET', url: '/items/%E0%A4%A' })), 'bad-request')
  } finally {
    await app.close()
  }
})

test('errors: a ProblemError keeps its kind and Retry-After; a defect is 500 internal without its message', async () => {
  const app = buildApp()
  try {
    const unavailable = await app.inject({ method: 'GET', url: '/items/problem' })
    assertProblem(fromInject(unavailable), 'store-unavailable')
    assert.equal(unavailable.headers['retry-after'], '3')
    assert.equal(unavailable.headers['cache-control'], 'no-store')
    const defect = await app.inject({ method: 'GET', url: '/items/defect' })
    assertProblem(fromInject(defect), 'internal')
    assert.doesNotMatch(defect.body, /undefined/)
  } finally {
    await app.close()
  }
})

test('security headers and a request id on every answer, success or problem; a hostile id is replaced', async () => {
  const app = buildApp()
  try {
    for (const url of ['/items', '/nowhere', '/items/defect']) {
      const answer = await app.inject({ method: 'GET', url, headers: { 'x-request-id': 'req-1.a_b' } })
      assert.equal(answer.headers['x-content-type-options'], 'nosniff', url)
      assert.equal(answer.headers['x-frame-options'], 'DENY', url)
      assert.equal(answer.headers['referrer-policy'], 'no-referrer', url)
      assert.match(String(answer.headers['content-security-policy']), /default-src 'none'/, url)
      assert.equal(answer.headers['x-powered-by'], undefined, url)
      assert.equal(answer.headers['x-request-id'], 'req-1.a_b', url)
    }
    for (const hostile of ['a b', 'x'.repeat(129), 'a\u00e9', '<script>']) {
      const answer = await app.inject({ method: 'GET', url: '/items', headers: { 'x-request-id': hostile } })
      assert.match(String(answer.headers['x-request-id']), /^[0-9a-f-]{36}$/, hostile)
    }
  } finally {
    await app.close()
  }
})

test('the server time-outs and load shedding are those given', async () => {
  const app = buildApp({ timeouts: { headersMs: 1234, requestMs: 5678, keepAliveMs: 9012 }, loadShedDelayMs: 0 })
  try {
    await app.ready()
    assert.equal(app.server.headersTimeout, 1234)
    assert.equal(app.server.requestTimeout, 5678)
    assert.equal(app.server.keepAliveTimeout, 9012)
    assert.equal(app.hasDecorator('memoryUsage'), false, 'no load shedding at 0')
  } finally {
    await app.close()
  }
  const shedding = buildApp({ loadShedDelayMs: 500 })
  try {
    await shedding.ready()
    assert.equal(shedding.hasDecorator('memoryUsage'), true, 'load shedding on')
  } finally {
    await shedding.close()
  }
})

test('a lane answers what it takes, with every answer\'s headers; the framework answers the rest, and what a failing lane leaves', async () => {
  const lane: Lane = (exchange) => {
    if (exchange.req.url === '/items/thrown') throw new Error('a defect in the lane')
    if (exchange.req.url !== '/items/lane') return false
    exchange.problem('/items/:id', 'bad-request', 'Taken by the lane.')
    return true
  }
  const sink = logSink('info')
  const { app, url } = await listen(buildApp({ lane, logger: sink.logger, corsOrigins: '*' }))
  try {
    const taken = await fetch(`${url}/items/lane`, { headers: { 'x-request-id': 'taken' } })
    assert.equal(taken.status, 400)
    assert.equal((await taken.json() as { detail: string }).detail, 'Taken by the lane.')
    assert.equal(taken.headers.get('x-request-id'), 'taken')
    assert.equal(taken.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(taken.headers.get('access-control-allow-origin'), '*')
    for (const path of ['/items/left', '/items/thrown']) {
      const answer = await fetch(`${url}${path}`, { headers: { 'x-request-id': 'framework' } })
      assert.equal(answer.status, 200, path)
      assert.deepEqual(await answer.json(), { id: path.slice('/items/'.length) })
      assert.equal(answer.headers.get('x-request-id'), 'framework')
    }
    const failure = sink.lines.find((line) => line.msg === 'the fast lane failed on a request; the framework answers it')
    assert.equal(failure?.err?.message, 'a defect in the lane')
    assert.deepEqual(sink.lines.filter((line) => line.msg === 'request').map((line) => [line.reqId, line.url, line.status]),
      [['taken', '/items/lane', 400], ['framework', '/items/left', 200], ['framework', '/items/thrown', 200]])
  } finally {
    await app.close()
  }
})
