// Cache tags and purge paths: one key per tag in either header, whatever the slug or tag holds.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { changeCacheTags, changePaths, postTag, tagHeaderValue, tagTag } from '../../src/sync/cache-tags.js'

test('a tag stays one key in Surrogate-Key and Cache-Tag, and names its text unambiguously', () => {
  // Any code points, and UTF-16 units on their own (lone surrogates cannot be percent-encoded).
  const loneUnit = fc.integer({ min: 0xd800, max: 0xdfff }).map((unit) => String.fromCharCode(unit))
  fc.assert(fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.oneof(loneUnit, fc.constantFrom('a', ' ', ',', '%')) })), (text) => {
    for (const [prefix, tag] of [['post-', postTag(text)], ['tag-', tagTag(text)]] as const) {
      assert.ok(tag.startsWith(prefix))
      assert.match(tag, /^[\x21-\x7e]+$/, 'printable ASCII, no space')
      assert.ok(!tag.includes(','), 'no comma')
      assert.equal(decodeURIComponent(tag.slice(prefix.length)), (text as string & { toWellFormed: () => string }).toWellFormed())
      assert.equal(tagHeaderValue('Surrogate-Key', [tag, 'posts']).split(' ').length, 2)
      assert.equal(tagHeaderValue('Cache-Tag', [tag, 'posts']).split(',').length, 2)
    }
  }), { numRuns: 2000 })
  assert.equal(tagTag('web dev'), 'tag-web%20dev')
  assert.equal(tagTag('a,b'), 'tag-a%2Cb')
  assert.equal(tagTag('100%'), 'tag-100%25')
  assert.equal(postTag('hello-world'), 'post-hello-world')
})

test('a change names what it makes stale', () => {
  const change = { since: 's', until: 'u', upserted: ['b', 'new name'], deleted: ['a'] }
  assert.deepEqual(changeCacheTags(change), ['posts', 'post-a', 'post-b', 'post-new%20name'])
  assert.deepEqual(changePaths(change), ['/api/blog', '/api/tags', '/feed.xml', '/feed.atom', '/feed.json', '/sitemap.xml', '/api/blog/a', '/api/blog/b', '/api/blog/new%20name'])
  assert.equal(tagHeaderValue('cache-tag', ['posts', 'post-a']), 'posts,post-a')
  assert.equal(tagHeaderValue('Surrogate-Key', ['posts', 'post-a']), 'posts post-a')
  assert.equal(tagHeaderValue('Edge-Cache-Tag', ['posts', 'post-a']), 'posts,post-a')
  assert.equal(tagHeaderValue('xkey', ['posts', 'post-a']), 'posts post-a')
})
