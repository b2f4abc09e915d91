// The renderer's rules beyond the golden files: for any Markdown, hostile or not, the HTML holds
// only markdown-it's own tags and allowed link targets; link policy; heading ids; plain text.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { headingSlug } from '../../src/render/heading-ids.js'
import { isAllowedLink } from '../../src/render/link-policy.js'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { checkRenderedHtml } from './rendered-html.js'

const render = createMarkdownRenderer()

// Pieces of Markdown, HTML and URLs that combine into the tricky cases: links, images, autolinks,
// reference definitions, entities, schemes in every case, whitespace and control characters,
// comments, raw tags, emphasis runs.
const PIECES = ['[', ']', '(', ')', '<', '>', '!', '*', '_', '~', '`', '#', '-', '|', ':', '"', "'", '=', '&', ';', '#', '/', '\\',
  ' ', '\t', '\n', '\n\n', '\u0000', '\u0001', '\u00a0', 'javascript', 'JaVaScRiPt', 'vbscript', 'data', 'file', 'mailto', 'https',
  'http', 'www.', 'a@b.co', 'example.com', 'alert(1)', '&#106;', '&#x6A;', '&colon;', '&#9;', '&#10;', '&amp;', '&quot;', '%3A',
  '<!--', '-->', '<script>', '</script>', '<img src=x onerror=alert(1)>', ' onerror=', 'x', 'é', '日本', '```', '    ', '> ', '- ', '1. ']
const markdown = fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }).map((pieces) => pieces.join(''))

test('any Markdown renders to known tags and attributes, every target http, https, mailto or relative', () => {
  fc.assert(fc.property(markdown, (source) => {
    checkRenderedHtml(render(source).html)
  }), { numRuns: 3000 })
})

test('arbitrary text renders to known tags and attributes too', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (source) => {
    checkRenderedHtml(render(source).html)
  }), { numRuns: 500 })
})

test('the link policy keeps http, https, mailto and relative targets and refuses every other scheme', () => {
  for (const href of ['https://example.com', 'HTTP://EXAMPLE.COM', 'mailto:a@b.co', '/about', '../x', '#part', '?q=1', '//cdn.example.com/x', './a:b', 'java%09script:x', '']) {
    assert.equal(isAllowedLink(href), true, href)
  }
  for (const href of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:x', 'java\tscript:x', 'java\nscript:x', '\u0001javascript:x',
    'vbscript:x', 'data:image/png;base64,AAAA', 'data:text/html,x', 'file:///etc/passwd', 'ftp://example.com', 'tel:123', 'blob:https://x/y', 'a:b/../c', 'http://[bad']) {
    assert.equal(isAllowedLink(href), false, JSON.stringify(href))
  }
})

test('a refused link or image stays as its literal Markdown text', () => {
  assert.equal(render('[x](javascript:alert(1))').html, '<p>[x](javascript:alert(1))</p>\n')
  assert.equal(render('![x](data:image/png;base64,AA)').html, '<p>![x](data:image/png;base64,AA)</p>\n')
  assert.equal(render('[x](/ok) ![y](img/y.png)').html, '<p><a href="/ok">x</a> <img src="img/y.png" alt="y"></p>\n')
})

test('raw HTML is escaped and HTML comments are dropped', () => {
  assert.equal(render('<b onclick="x()">hi</b>').html, '<p>&lt;b onclick=&quot;x()&quot;&gt;hi&lt;/b&gt;</p>\n')
  assert.equal(render('a <!-- note --> b').html, '<p>a  b</p>\n')
  assert.equal(render('a\n<!-- more -->\nb').html, '<p>a</p>\n<p>b</p>\n')
  assert.equal(render('<!-- unclosed').html, '<p>&lt;!-- unclosed</p>\n')
})

test('many unclosed comments cost one scan each way, not one per opener', () => {
  // Each `<!--` without a `-->` would rescan the rest; remembered, 20,000 of them stay linear.
  const source = '<!--\n'.repeat(20_000) + '<!-- x'.repeat(20_000)
  const { html } = render(source)
  assert.equal(html.split('&lt;!--').length - 1, 40_000)
})

test('a comment that does not close inside its list item is text there', () => {
  assert.equal(render('- <!-- a\n- b -->').html, '<ul>\n<li>&lt;!-- a</li>\n<li>b --&gt;</li>\n</ul>\n')
})

test('nesting: blocks deeper than 100 levels are left out, nested emphasis renders nested', () => {
  const deep = render(`${'>'.repeat(150)} too deep\n\nafter`)
  assert.equal(deep.html.split('<blockquote>').length - 1, 100)
  assert.ok(!deep.html.includes('too deep') && deep.html.endsWith('<p>after</p>\n'))
  const emphasis = render(`${'*a '.repeat(150)}x${' a*'.repeat(150)}`)
  assert.equal(emphasis.html.split('<em>').length - 1, 150)
})

test('heading ids: GitHub slugs, repeated ones numbered in document order', () => {
  assert.equal(headingSlug('What\'s new in v2.0?'), 'whats-new-in-v20')
  assert.equal(headingSlug('  Café & Crème  '), 'café--crème')
  assert.equal(headingSlug('snake_case and-hyphen'), 'snake_case-and-hyphen')
  assert.equal(headingSlug('!!!'), 'section')
  const ids = [...render('# A\n# A\n# A-1\n# A\n# !\n# ?').html.matchAll(/id="([^"]+)"/g)].map((match) => match[1])
  assert.deepEqual(ids, ['a', 'a-1', 'a-1-1', 'a-2', 'section', 'section-1'])
})

test('10,000 equal headings get distinct ids in linear time', () => {
  const ids = [...render('# h\n'.repeat(10_000)).html.matchAll(/id="([^"]+)"/g)].map((match) => match[1])
  assert.equal(new Set(ids).size, 10_000)
  assert.equal(ids.at(-1), 'h-9999')
})

test('plain text: link text and alt text kept, targets and markup dropped, one line per block', () => {
  const { text } = render('# Title\n\nSee [the *docs*](https://x.test) and ![a chart](c.png).\nNext  \nline\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode  kept\n```\n\n---\n')
  assert.equal(text, 'Title\nSee the docs and a chart. Next\nline\na b\n1 2\ncode  kept')
})

test('plain text decodes entities and never escapes: it is text, not HTML', () => {
  assert.equal(render('&lt;b&gt; &amp; &copy; <i>').text, '<b> & © <i>')
})

test('an empty document renders to nothing', () => {
  assert.deepEqual(render(''), { html: '', text: '', wordCount: 0 })
  assert.deepEqual(render(' \n\n\t\n'), { html: '', text: '', wordCount: 0 })
})
