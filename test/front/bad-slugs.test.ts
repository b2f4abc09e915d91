// Bad slugs sent raw on the wire (clients would normalise dot segments and backslashes away
// before the server sees them): each is a problem document, and none reaches the upstream.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { json, startFakeUpstream, type FakeUpstream } from '../helpers/fake-upstream.js'
import { rawGet } from '../helpers/raw-http.js'
import { assertProblem } from '../helpers/problem.js'
import { startFront, type RunningApp } from '../helpers/tiers.js'
import type { ProblemKind } from '../../src/contract/problems.js'

let upstream: FakeUpstream
let front: RunningApp

before(async () => {
  upstream = await startFakeUpstream((req, res) => json(res, 200, { slug: decodeURIComponent(req.url?.slice('/api/post/'.length) ?? '') }))
  front = await startFront(upstream.url)
})
after(async () => {
  await front.app.close()
  await upstream.close()
})

const INVALID: Array<[string, string]> = [
  ['empty', '/api/blog/'],
  ['encoded slash', '/api/blog/a%2Fb'],
  ['encoded trailing slash', '/api/blog/hello-world%2F'],
  ['dot-dot', '/api/blog/..'],
  ['dot', '/api/blog/.'],
  ['encoded dot-dot', '/api/blog/%2e%2e'],
  ['half-encoded dot-dot', '/api/blog/.%2e'],
  ['encoded traversal', '/api/blog/..%2F..%2Fadmin'],
  ['host switch', '/api/blog/%2F%2Fevil.example%2Fx'],
  ['scheme', '/api/blog/http:%2F%2Fevil'],
  ['encoded backslashes', '/api/blog/a%5C..%5C..'],
  ['raw backslash', '/api/blog/a\\..\\..'],
  ['double encoding', '/api/blog/%252F'],
  ['encoded NUL', '/api/blog/a%00b'],
  ['upper case', '/api/blog/Hello-World'],
  ['NFC accent', '/api/blog/caf%C3%A9'],
  ['NFD accent', '/api/blog/cafe%CC%81'],
  ['full-width letters', '/api/blog/%EF%BD%93%EF%BD%8C%EF%BD%95%EF%BD%87'],
  ['right-to-left override', '/api/blog/%E2%80%AE'],
  ['zero-width space', '/api/blog/hello%E2%80%8Bworld'],
  ['encoded space', '/api/blog/a%20b'],
  ['matrix parameter', '/api/blog/a;b=c'],
  ['encoded question mark', '/api/blog/a%3Fx'],
  ['encoded hash', '/api/blog/a%23b'],
  ['CRLF injection', '/api/blog/a%0D%0AX-Injected:%201'],
  ['leading hyphen', '/api/blog/-a'],
  ['trailing hyphen', '/api/blog/a-'],
  ['double hyphen', '/api/blog/a--b'],
  ['SQL', '/api/blog/%27%20OR%20%271%27%3D%271'],
  ['201 characters', `/api/blog/${'a'.repeat(201)}`],
  ['5,000 characters', `/api/blog/${'a'.repeat(5000)}`],
  ['underscore', '/api/blog/a_b'],
  ['percent', '/api/blog/100%25']
]

for (const [name, path] of INVALID) {
  test(`invalid slug (${name}) is a 400 and the upstream is not called`, async () => {
    const before = upstream.requests.length
    assertProblem(await rawGet(front.port, path), 'invalid-slug')
    assert.equal(upstream.requests.length, before, 'no upstream call')
  })
}

const REJECTED_BEFORE_ROUTING: Array<[string, string | Buffer, ProblemKind]> = [
  ['bad percent-encoding', '/api/blog/%zz', 'bad-request'],
  ['truncated UTF-8', '/api/blog/%E0%A4%A', 'bad-request'],
  ['overlong UTF-8 slash', '/api/blog/%C0%AF', 'bad-request'],
  ['raw NUL byte', Buffer.from('/api/blog/a\u0000b', 'latin1'), 'bad-request'],
  ['raw UTF-8', Buffer.from('/api/blog/café', 'utf8'), 'bad-request'],
  ['raw tab', '/api/blog/a\tb', 'bad-request'],
  ['20,000 characters', `/api/blog/${'a'.repeat(20_000)}`, 'headers-too-large'],
  ['another route', '/api/blog/a/b', 'not-found'],
  ['trailing slash route', '/api/blog/x/', 'not-found'],
  ['double slash', '/api/blog//', 'not-found'],
  ['upper-case route', '/API/BLOG/hello', 'not-found']
]

for (const [name, path, kind] of REJECTED_BEFORE_ROUTING) {
  test(`${name} is a ${kind} problem and the upstream is not called`, async () => {
    const before = upstream.requests.length
    assertProblem(await rawGet(front.port, path), kind)
    assert.equal(upstream.requests.length, before, 'no upstream call')
  })
}

test('a 200-character slug is valid and relayed, percent-encoded as given', async () => {
  const slug = 'a'.repeat(200)
  const response = await rawGet(front.port, `/api/blog/${slug}`)
  assert.equal(response.status, 200)
  assert.equal(upstream.requests.at(-1)?.url, `/api/post/${slug}`)
})

test('an absolute-form request target never changes the upstream', async () => {
  const before = upstream.requests.length
  const response = await rawGet(front.port, 'http://evil.example/api/blog/hello-world')
  assert.equal(response.status, 200)
  assert.equal(upstream.requests.length, before + 1)
  assert.equal(upstream.requests.at(-1)?.headers.host, upstream.url.host)
})

test('an operator pattern is anchored and dot segments stay refused', async () => {
  const custom = await startFront(upstream.url, { slugPattern: /[A-Za-z0-9._-]+/ })
  try {
    assert.equal((await rawGet(custom.port, '/api/blog/Hello_World')).status, 200)
    assert.equal(upstream.requests.at(-1)?.url, '/api/post/Hello_World')
    const before = upstream.requests.length
    for (const path of ['/api/blog/..', '/api/blog/.', '/api/blog/a%2Fb', '/api/blog/a%20b']) {
      assertProblem(await rawGet(custom.port, path), 'invalid-slug')
    }
    assert.equal(upstream.requests.length, before)
  } finally {
    await custom.app.close()
  }
})
