// Golden files: each test/render/golden/NAME.md renders to exactly NAME.html and NAME.txt. Run
// with UPDATE_GOLDEN=1 to write the expected files after a deliberate change, then read the diff.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { checkRenderedHtml } from './rendered-html.js'

const GOLDEN = join(dirname(fileURLToPath(import.meta.url)), 'golden')
const render = createMarkdownRenderer()
const update = process.env.UPDATE_GOLDEN === '1'

const sources = readdirSync(GOLDEN).filter((name) => name.endsWith('.md')).sort()

test('the golden folder has its cases', () => {
  assert.ok(sources.length >= 8, `found ${sources.join(', ')}`)
})

for (const name of sources) {
  test(`golden: ${name}`, () => {
    const { html, text } = render(readFileSync(join(GOLDEN, name), 'utf8'))
    const base = join(GOLDEN, name.slice(0, -3))
    if (update) {
      writeFileSync(`${base}.html`, html)
      writeFileSync(`${base}.txt`, `${text}\n`)
    }
    assert.equal(html, readFileSync(`${base}.html`, 'utf8'))
    assert.equal(`${text}\n`, readFileSync(`${base}.txt`, 'utf8'))
    checkRenderedHtml(html)
  })
}
