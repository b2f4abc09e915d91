import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { slugFromFileName } from '../../src/import/file-name-slug.js'
import { createSlugValidator } from '../../src/contract/slug.js'

test('a slug from the file name: lower-cased, accents removed, runs of other characters one hyphen, trimmed', () => {
  const cases: Array<[string, string]> = [
    ['Third Post!.md', 'third-post'],
    ['posts/2024/Third Post!.md', 'third-post'],
    ['Café Crème.md', 'cafe-creme'],
    ['Cafe\u0301 Cre\u0300me.md', 'cafe-creme'], // decomposed accents
    ['hello-world.md', 'hello-world'],
    ['Hello.World.MD', 'hello-world'],
    ['--a__b  c--.md', 'a-b-c'],
    ['2024-01-02 New Year.md', '2024-01-02-new-year'],
    ['ＦＵＬＬ ｗｉｄｔｈ.md', 'full-width'], // NFKD compatibility forms
    ['ﬁle.md', 'file'],
    ['İstanbul.md', 'istanbul'],
    ['Straße.md', 'stra-e'], // no ASCII decomposition: ß is one of the "other characters"
    ['Ærø.md', 'r'],
    ['!!!.md', ''],
    ['日本語.md', ''],
    ['.md', ''],
    ['notes.markdown', 'notes'],
    ['README', 'readme']
  ]
  for (const [path, slug] of cases) assert.equal(slugFromFileName(path), slug, path)
})

test('a derived slug is empty or passes the default slug rule', () => {
  const valid = createSlugValidator()
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 150 }), (name) => {
    const slug = slugFromFileName(`${name.replaceAll('/', ' ')}.md`)
    assert.ok(slug === '' || valid(slug), JSON.stringify({ name, slug }))
  }), { numRuns: 2000 })
})
