// Rendering once per content: the cache is keyed by the content alone, so rendering the same posts
// again (after a commit that changed another post, or none) renders nothing; bounded in entries
// and bytes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createMarkdownRenderer, type MarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { createRenderCache, renderingBytes } from '../../src/render/render-cache.js'

/** The real renderer, counting the sources it renders. */
function countingRenderer (): { render: MarkdownRenderer, rendered: string[] } {
  const real = createMarkdownRenderer()
  const rendered: string[] = []
  return { render: (source) => { rendered.push(source); return real(source) }, rendered }
}

const posts = (contents: Record<string, string>): Array<{ slug: string, content: string }> =>
  Object.entries(contents).map(([slug, content]) => ({ slug, content }))

test('each content renders once, however many requests and posts versions ask for it', () => {
  const { render, rendered } = countingRenderer()
  const cache = createRenderCache({ render, maxEntries: 100, maxBytes: 1 << 20 })
  const before = posts({ a: '# A', b: '*B*', c: 'C' })
  for (let request = 0; request < 5; request++) for (const post of before) cache.render(post.content)
  assert.deepEqual(rendered, ['# A', '*B*', 'C'])

  // A commit changes b only (and adds d): the next list renders b's new content and d, nothing else.
  const after = posts({ a: '# A', b: '*B, edited*', c: 'C', d: 'D' })
  const html = after.map((post) => cache.render(post.content).html)
  assert.deepEqual(rendered.slice(3), ['*B, edited*', 'D'])
  assert.equal(html[0], '<h1 id="a">A</h1>\n')
})

test('two posts with the same content share one rendering', () => {
  const { render, rendered } = countingRenderer()
  const cache = createRenderCache({ render, maxEntries: 100, maxBytes: 1 << 20 })
  assert.equal(cache.render('same'), cache.render('same'))
  assert.equal(rendered.length, 1)
})

test('a cached rendering is the rendering', () => {
  const real = createMarkdownRenderer()
  const cache = createRenderCache({ render: real, maxEntries: 10, maxBytes: 1 << 20 })
  const source = '# Title\n\nSome *text* and [a link](/x).'
  cache.render(source)
  assert.deepEqual(cache.render(source), real(source))
})

test('bounded in entries: the least recently used rendering goes first', () => {
  const { render, rendered } = countingRenderer()
  const cache = createRenderCache({ render, maxEntries: 2, maxBytes: 1 << 20 })
  cache.render('one')
  cache.render('two')
  cache.render('one')
  cache.render('three') // evicts "two", the least recently used
  assert.equal(cache.size, 2)
  cache.render('one')
  cache.render('two')
  assert.deepEqual(rendered, ['one', 'two', 'three', 'two'])
})

test('bounded in bytes: renderings beyond the budget are evicted, one larger than it is not kept', () => {
  const { render, rendered } = countingRenderer()
  const small = 'x'.repeat(1000)
  const budget = renderingBytes(createMarkdownRenderer()(small)) * 3
  const cache = createRenderCache({ render, maxEntries: 1000, maxBytes: budget })
  for (let index = 0; index < 10; index++) cache.render(`${small}${index}`)
  assert.ok(cache.size <= 3 && cache.size >= 2, `${cache.size} entries kept`)
  const huge = 'y'.repeat(budget)
  assert.ok(cache.render(huge).html.includes('yyy'), 'rendered and returned')
  cache.render(huge)
  assert.equal(rendered.filter((source) => source === huge).length, 2, 'but not kept')
})
