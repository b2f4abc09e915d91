// search_snippet: a short passage of the text, HTML-escaped, the wanted words in <mark>, and no
// other markup whatever the text and the query.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { parseSearchQuery, type SearchQuery } from '../../src/contract/search-query.js'
import { createWordKey, searchSnippet, SNIPPET_LENGTH } from '../../src/search/search-snippet.js'

const snippet = (text: string, q: string, language = 'english'): string => searchSnippet(text, parseSearchQuery(q), language)

test('wanted words are marked whatever their case and accents; English words by their stem', () => {
  assert.equal(snippet('Running with Quokkas in the café.', 'run quokka cafe'), '<mark>Running</mark> with <mark>Quokkas</mark> in the <mark>café</mark>.')
  assert.equal(snippet('Running runs runner', 'run', 'simple'), 'Running runs runner')
  assert.equal(snippet('Running runs runner', 'running', 'simple'), '<mark>Running</mark> runs runner')
  // Every word of a phrase, wherever it is; never an excluded word.
  assert.equal(snippet('solar panels and a kettle', '"solar kettle" -panels'), '<mark>solar</mark> panels and a <mark>kettle</mark>')
})

test('the text is escaped, and nothing else is markup', () => {
  assert.equal(snippet('<script>alert("x")</script> & \'quokka\'', 'quokka script'),
    '&lt;<mark>script</mark>&gt;alert(&quot;x&quot;)&lt;/<mark>script</mark>&gt; &amp; &#39;<mark>quokka</mark>&#39;')
  assert.equal(snippet('a <mark>quokka</mark>', 'mark'), 'a &lt;<mark>mark</mark>&gt;quokka&lt;/<mark>mark</mark>&gt;')
})

test('a long text gives the passage with the most wanted words, cut at words, with ellipses', () => {
  const before = 'lorem ipsum dolor sit amet '.repeat(20)
  const text = `${before}the quokka met a solar kettle near the quokka burrow ${'and then nothing happened '.repeat(20)}end`
  const result = snippet(text, 'quokka kettle')
  assert.match(result, /^…/)
  assert.match(result, /…$/)
  assert.match(result, /<mark>quokka<\/mark> met a solar <mark>kettle<\/mark> near the <mark>quokka<\/mark>/)
  const plain = result.replace(/<\/?mark>/g, '').slice(1, -1)
  assert.ok(plain.length <= SNIPPET_LENGTH)
  assert.ok(text.includes(plain), 'a passage of the text, cut between words')
  // The window holding both words wins over an earlier one holding one.
  const two = `kettle ${'filler words here '.repeat(30)} quokka kettle ${'more filler '.repeat(30)}`
  assert.match(snippet(two, 'quokka kettle'), /^….*<mark>quokka<\/mark> <mark>kettle<\/mark>/)
})

test('without a wanted word in the text, the snippet is its start; white space becomes single spaces', () => {
  assert.equal(snippet('First line\n\n  second\tline', 'quokka'), 'First line second line')
  const long = 'word '.repeat(100)
  assert.equal(snippet(long, 'quokka'), `${'word '.repeat(40).trim()}…`)
})

const FRAGMENTS = ['<', '>', '&', '"', "'", '<mark>', '</mark>', '&amp;', '&lt;', '<script>', '<!--', ']]>', ' ', '\n', '\t', '\u0000',
  '\ud800', '\udc00', '🎉', '🎉'.repeat(101), 'é', 'e\u0301', 'quokka', 'Quokkas', 'running', 'run', 'kettle', 'x'.repeat(250), '…']
const text = fc.oneof(
  fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 300 }).map((parts) => parts.join('')),
  fc.string({ maxLength: 3000, unit: 'binary' }),
  fc.string({ maxLength: 500, unit: 'grapheme' })
)
const query = fc.oneof(fc.array(fc.constantFrom(...FRAGMENTS, 'OR', '-', '"'), { minLength: 1, maxLength: 8 }).map((p) => p.join(' ')), fc.string({ maxLength: 60 }))
  .map((q) => { try { return parseSearchQuery(q) } catch { return undefined } })
  .filter((q): q is SearchQuery => q !== undefined)

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" }

test('a snippet never carries markup other than <mark> and </mark>, and shows only the text', () => {
  fc.assert(fc.property(text, query, fc.constantFrom('english', 'simple'), (input, parsed, language) => {
    const result = searchSnippet(input, parsed, language)
    assert.doesNotMatch(result, /\p{Cs}/u, 'well-formed UTF-16: never half of a character')
    const tags = result.match(/<\/?mark>/g) ?? []
    tags.forEach((tag, i) => assert.equal(tag, i % 2 === 0 ? '<mark>' : '</mark>', 'marks open and close in turn'))
    assert.equal(tags.length % 2, 0)
    const withoutMarks = result.replace(/<\/?mark>/g, '')
    assert.doesNotMatch(withoutMarks, /[<>"']/)
    assert.doesNotMatch(withoutMarks, /&(?!(?:amp|lt|gt|quot|#39);)/)
    const key = createWordKey(language)
    const wanted = new Set(parsed.groups.flat().flatMap((term) => term.tokens.map(key)))
    for (const [, marked = ''] of result.matchAll(/<mark>(.*?)<\/mark>/g)) {
      const word = marked.replace(/&[a-z#0-9]+;/g, (e) => ENTITIES[e] as string)
      assert.ok(wanted.has(key(word)), `${word} is not a wanted word`)
    }
    const plain = withoutMarks.replace(/&[a-z#0-9]+;/g, (e) => ENTITIES[e] as string)
    const inner = plain.replace(/^…/, '').replace(/…$/, '')
    assert.ok([...inner].length <= SNIPPET_LENGTH)
    const normalised = input.replace(/[\s\p{Cc}]+/gu, ' ').replace(/\p{Cs}/gu, '\uFFFD').trim()
    assert.ok(normalised.includes(inner), 'a passage of the text')
  }), { numRuns: 3000 })
})
