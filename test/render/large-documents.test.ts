// A 1 MB post, typical or hostile, renders in bounded time: markdown-it and our rules are linear
// (or close) in the input. Each renders in a child process given LIMIT_MS: a hang detector, far
// above the measured times (at most about 2 s of CPU for the worst shape here, unclosed
// brackets, on a loaded 2-core machine), not a speed check: a quadratic rule takes many minutes on
// these inputs (equal headings did, before their ids kept a counter per slug). The shapes are
// those that reach our own rules (comments, heading ids, the link policy) and markdown-it's
// slowest known ones.
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { rendererPool, type Rendering } from './render-in-child.js'

// Two at a time: one renderer per core of a 2-core machine.
const renderers = rendererPool(2)
after(() => { renderers.close() })
const MB = 1 << 20
const LIMIT_MS = 60_000
const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB)

const PARAGRAPH = 'Lorem ipsum *dolor* sit amet, **consectetur** adipiscing [elit](https://example.com/x), sed `do` eiusmod ' +
  'tempor www.example.org incididunt ut labore et dolore magna aliqua.\n\n'

/** Renders `source` in a child, and fails unless its HTML passes the check. */
async function renderChecked (source: string): Promise<Rendering> {
  const rendering = await renderers.render(source, LIMIT_MS)
  assert.equal(rendering.failure, '', 'the rendered HTML passes its check')
  return rendering
}

test('a typical 1 MB post', async () => {
  const { htmlLength, wordCount, textStart } = await renderChecked(`# A long post\n\n${fill(PARAGRAPH)}`)
  assert.ok(htmlLength > MB)
  assert.ok(wordCount > 100_000)
  assert.ok(textStart.startsWith('A long post\nLorem ipsum dolor sit amet'))
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

describe('hostile 1 MB posts', { concurrency: 2 }, () => {
  for (const [shape, source] of Object.entries(HOSTILE)) {
    test(`1 MB of ${shape}`, async () => {
      await renderChecked(source)
    })
  }
})
