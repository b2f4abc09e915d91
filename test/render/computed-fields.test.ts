// Word count, reading time and excerpt: the definitions every tier shares, with their edge cases.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { computeFields, excerpt, EXCERPT_LENGTH, readingTime } from '../../src/render/computed-fields.js'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { countWords } from '../../src/render/words.js'

const render = createMarkdownRenderer()

test('a word is a run of non-space characters with a letter or digit', () => {
  assert.equal(countWords(''), 0)
  assert.equal(countWords('   \n\t '), 0)
  assert.equal(countWords('one two  three\nfour\tfive'), 5)
  assert.equal(countWords("don't C++ 3.14 e-mail well-known"), 5)
  assert.equal(countWords('— ** -- ... 🎉'), 0, 'punctuation and symbols alone are no words')
  assert.equal(countWords('café naïve Ελληνικά русский'), 4)
  assert.equal(countWords('non\u00a0breaking\u3000ideographic space'), 4)
})

test('a URL is one word', () => {
  assert.equal(countWords('see https://example.com/a/b?c=d&e=f#g now'), 3)
  assert.equal(countWords('mail ada@example.com'), 2)
})

test('CJK: each Han, Hiragana or Katakana character is a word; Hangul is spaced like English', () => {
  assert.equal(countWords('日本語の本'), 5)
  assert.equal(countWords('コーヒー'), 4, 'the long-vowel mark belongs to the script')
  assert.equal(countWords('中文，没有空格。'), 6, 'CJK punctuation is no word')
  assert.equal(countWords('hello世界'), 3)
  assert.equal(countWords('한국어 문장입니다'), 2)
})

test('words are counted in the rendered text: markup and link targets are not words, code is', () => {
  const { wordCount } = render('**Bold** [link text](https://example.com/very/long/path) ![alt words](x.png)\n\n```\nconst x = 1\n```\n')
  assert.equal(wordCount, 8, 'Bold, link, text, alt, words, const, x, 1')
})

test('reading time: words ÷ 275, rounded up, at least one minute', () => {
  assert.equal(readingTime(0), 1)
  assert.equal(readingTime(1), 1)
  assert.equal(readingTime(275), 1)
  assert.equal(readingTime(276), 2)
  assert.equal(readingTime(550), 2)
  assert.equal(readingTime(551), 3)
})

test('computed fields of an empty post', () => {
  assert.deepEqual(computeFields(render('').text), { word_count: 0, reading_time: 1, excerpt: '' })
})

test('the excerpt is the summary when the post has one that is not blank', () => {
  assert.equal(excerpt('the text', 'A summary.'), 'A summary.')
  assert.equal(excerpt('the text', '  '), 'the text')
  assert.equal(excerpt('the text', ''), 'the text')
  assert.equal(excerpt('the text', null), 'the text')
  assert.equal(excerpt('the text', 42), 'the text')
})

test('a short text is its own excerpt, its white space collapsed', () => {
  assert.equal(excerpt('Title\nFirst  paragraph.\n\tSecond.'), 'Title First paragraph. Second.')
  const exact = 'a'.repeat(EXCERPT_LENGTH)
  assert.equal(excerpt(exact), exact, 'exactly 200 characters are not cut')
})

test('a long text is cut at the last word boundary within 200 characters, then an ellipsis', () => {
  const words = Array.from({ length: 60 }, (_, index) => `word${index}`).join(' ')
  const cut = excerpt(words)
  assert.ok(cut.endsWith('…'))
  const kept = cut.slice(0, -1)
  assert.ok([...kept].length <= EXCERPT_LENGTH)
  assert.ok(words.startsWith(kept + ' '), 'cut before a space, never inside a word')
  // A boundary right at 200: the 200 characters are kept whole.
  const aligned = `${'a'.repeat(199)}b c`
  assert.equal(excerpt(aligned), `${'a'.repeat(199)}b…`)
})

test('one word longer than the excerpt is cut at 200 characters', () => {
  const url = `https://example.com/${'a'.repeat(300)}`
  assert.equal(excerpt(url), `${url.slice(0, EXCERPT_LENGTH)}…`)
})

test('CJK text is cut between characters, never inside one nor before its marks', () => {
  const japanese = 'これは日本語の文章です。'.repeat(30)
  const cut = excerpt(japanese)
  assert.equal([...cut].length, EXCERPT_LENGTH + 1)
  assert.ok(japanese.startsWith(cut.slice(0, -1)))
  // An ideographic variation selector (a mark) stays with its character.
  const withSelector = `${'字'.repeat(199)}葛\u{E0100}${'字'.repeat(10)}`
  assert.equal(excerpt(withSelector), `${'字'.repeat(199)}…`)
})

test('emoji and accents are never split from what they belong to', () => {
  const family = '👨\u200d👩\u200d👧'
  const text = `${'a'.repeat(198)}${family}${'b'.repeat(10)}`
  const cut = excerpt(text)
  assert.ok(!cut.includes('\u200d…') && !/\u200d$/.test(cut.slice(0, -1)), 'no dangling joiner')
  const accented = `${'e'.repeat(199)}e\u0301${'f'.repeat(10)}`
  assert.equal(excerpt(accented), `${'e'.repeat(199)}…`)
})

test('a long post is read lazily: the excerpt of 1 MB of text costs no more than its start', () => {
  const long = 'word '.repeat(200_000)
  assert.equal(excerpt(long), `${'word '.repeat(40).trim()}…`)
})

test('property: an excerpt is a prefix of the collapsed text, at most 200 characters before its ellipsis', () => {
  const texts = fc.array(fc.oneof(fc.constantFrom(' ', '\n', '日', 'é', 'e\u0301', '\u200d', '👍'), fc.string({ maxLength: 12 })), { maxLength: 80 })
    .map((parts) => parts.join(''))
  fc.assert(fc.property(texts, (text) => {
    const collapsed = text.split(/\s+/u).filter(Boolean).join(' ')
    const result = excerpt(text)
    if ([...collapsed].length <= EXCERPT_LENGTH) {
      assert.equal(result, collapsed)
      return
    }
    assert.ok(result.endsWith('…'))
    const kept = result.slice(0, -1)
    assert.ok([...kept].length <= EXCERPT_LENGTH && [...kept].length > 0)
    assert.ok(collapsed.startsWith(kept), JSON.stringify({ collapsed, kept }))
  }), { numRuns: 2000 })
})
