// The front's neighbour links over a fake upstream: the upstream's links to its detail route
// become links to the front's own, a neighbour whose slug the front refuses is left out, a
// neighbour link to anything else is a bad answer (502), and without the upstream's validator
// the front's own ETag covers the links.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { json } from '../helpers/fake-upstream.js'
import type { TestResponse } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { useInjectedFront } from '../helpers/injected-front.js'

const front = useInjectedFront()

const POST = { slug: 'middle', title: 'Middle' }
const answerWith = (link: string | undefined): void => {
  front.upstream.behave((_req, res) => json(res, 200, POST, link === undefined ? {} : { link }))
}
async function get (url: string): Promise<TestResponse & { link: unknown, etag: unknown }> {
  const r = await front.get(url)
  return { ...r, link: r.headers.link, etag: r.headers.etag }
}

test('the upstream\'s neighbours, on the front\'s route; one whose slug the front refuses is left out', async () => {
  answerWith('</api/post/newer-one>; rel="prev", </api/post/older%2Done>; rel="next"')
  assert.equal((await get('/api/blog/middle')).link, '</api/blog/newer-one>; rel="prev", </api/blog/older-one>; rel="next"')
  answerWith('</api/post/Upper-Case>; rel="prev", </api/post/older>; rel="next"')
  assert.equal((await get('/api/blog/middle')).link, '</api/blog/older>; rel="next"')
  answerWith('</api/post/Upper-Case>; rel="prev"')
  assert.equal((await get('/api/blog/middle')).link, undefined)
  answerWith(undefined)
  assert.equal((await get('/api/blog/middle')).link, undefined)
})

test('a neighbour link to anything but a post of the upstream is a bad answer', async () => {
  for (const link of ['</api/blog/x>; rel="next"', '</api/post/a/b>; rel="prev"', '<https://evil.example/api/post/x>; rel="next"']) {
    answerWith(link)
    assertProblem(await get('/api/blog/middle'), 'upstream-bad-response')
  }
})

test('without the upstream\'s validator, the front\'s ETag covers the links: the same body with other neighbours is another ETag', async () => {
  answerWith('</api/post/a>; rel="next"')
  const first = await get('/api/blog/middle')
  answerWith('</api/post/b>; rel="next"')
  const second = await get('/api/blog/middle')
  assert.equal(first.text, second.text)
  assert.notEqual(first.etag, second.etag)
})
