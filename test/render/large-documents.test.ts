// A 1 MB post, typical or hostile, renders in bounded time: markdown-it and our rules are linear
// (or close) in the input. Each hostile shape renders in a child process given LIMIT_MS: a hang detector,
// far above the measured times (at most about 2 s of CPU for the worst shape here, unclosed
// brackets, on a loaded 2-core machine), not a speed check: a quadratic rule takes many minutes on
// these inputs (equal headings did, before their ids kept a counter per slug). The shapes are
// those that reach our own rules (comments, heading ids, the link policy) and markdown-it's
// slowest known ones.
import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { checkRenderedHtml } from './rendered-html.js'
import { renderAndCheckWithin } from './render-in-child.js'

const render = createMarkdownRenderer()
const MB = 1 << 20
const LIMIT_MS = 60_000
const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB)

const PARAGRAPH = 'Lorem ipsum *dolor* sit amet, **consectetur** adipiscing [elit](https://example.com/x), sed `do` eiusmod ' +
  'tempor www.example.org incididunt ut labore et dolore magna aliqua.\n\n'

test('a typical 1 MB post', () => {
  const { html, text, wordCount } = render(`# A long post\n\n${fill(PARAGRAPH)}`)
  assert.ok(html.length > MB)
  assert.ok(wordCount > 100_000)
  assert.ok(text.startsWith('A long post\nLorem ipsum dolor sit amet'))
  checkRenderedHtml(html)
})

const HOSTILE: Record<string, string> = {
  'unclosed brackets': fill('['),
  'refused links': fill('[a](javascript:alert(1)) '),
  'deeply nested emphasis': '*'.repeat(MB / 2) + 'a' + '*'.repeat(MB / 2),
  'unclosed comments on their own lines': fill('<!--\n'),
  'unclosed inline comments': fill('x <!-- '),
  'equal headings': fill('# h\n'),
  'block quotes nested 1 MB deep': fill('>')
}

// Two at a time: each renders in a process of its own, one per core of a 2-core machine.
describe('hostile 1 MB posts', { concurrency: 2 }, () => {
  for (const [shape, source] of Object.entries(HOSTILE)) {
    test(`1 MB of ${shape}`, async () => {
      await renderAndCheckWithin(source, LIMIT_MS)
    })
  }
})
