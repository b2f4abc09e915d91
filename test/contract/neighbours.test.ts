// The neighbour links of detail answers: written by one tier, read back by the front exactly,
// whatever the slugs hold; a prev or next link to anything but the detail route is refused.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { BLOG_ROUTE, neighbourLink, neighboursIn, POST_ROUTE } from '../../src/contract/neighbours.js'

const slug = fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }).filter((s) => !/[\u0000-\u001f\u007f]/.test(s)) // eslint-disable-line no-control-regex

test('every pair of neighbours survives its Link header', () => {
  fc.assert(fc.property(fc.option(slug, { nil: undefined }), fc.option(slug, { nil: undefined }), (prev, next) => {
    const neighbours = { ...(prev === undefined ? {} : { prev }), ...(next === undefined ? {} : { next }) }
    const link = neighbourLink(POST_ROUTE, neighbours)
    if (prev === undefined && next === undefined) return assert.equal(link, undefined)
    assert.ok(link !== undefined)
    assert.deepEqual(neighboursIn(link, POST_ROUTE), neighbours)
  }), { numRuns: 2000 })
})

test('links are relative references to the detail route, slugs percent-encoded', () => {
  assert.equal(neighbourLink(BLOG_ROUTE, { prev: 'a', next: 'b' }), '</api/blog/a>; rel="prev", </api/blog/b>; rel="next"')
  assert.equal(neighbourLink(POST_ROUTE, { next: 'a/b c?%' }), '</api/post/a%2Fb%20c%3F%25>; rel="next"')
  assert.equal(neighbourLink(POST_ROUTE, {}), undefined)
})

test('reading: other relations are ignored; a prev or next that is not a post of the route is refused', () => {
  assert.deepEqual(neighboursIn('</api/post/a>; rel=prev, <https://x.example/>; rel="author"', POST_ROUTE), { prev: 'a' })
  assert.deepEqual(neighboursIn('</api/post/b>; rel="prev next"', POST_ROUTE), { prev: 'b', next: 'b' })
  for (const header of [
    '</api/blog/a>; rel="prev"', '</api/post/>; rel="next"', '</api/post/a/b>; rel="next"', '</api/post/a?x=1>; rel="next"',
    '</api/post/%E0%A4%A>; rel="next"', '<https://other.example/api/post/a>; rel="next"'
  ]) {
    assert.equal(neighboursIn(header, POST_ROUTE), undefined, header)
  }
})
