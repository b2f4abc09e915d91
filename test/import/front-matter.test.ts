import assert from 'node:assert/strict'
import { test } from 'node:test'
import { BadFileError } from '../../src/import/bad-file.js'
import { parseFrontMatterDate } from '../../src/import/front-matter-date.js'
import { parseFrontMatter } from '../../src/import/front-matter.js'

const fails = (text: string, reason: RegExp): void => {
  assert.throws(() => parseFrontMatter(text), (err: unknown) => err instanceof BadFileError && reason.test(err.message))
}

test('front matter between --- fences, the body after the closing one, byte for byte', () => {
  assert.deepEqual(parseFrontMatter('---\ntitle: Hello\ntags: [a, b]\n---\n# Hello\n\n---\nrule above\n'),
    { data: { title: 'Hello', tags: ['a', 'b'] }, body: '# Hello\n\n---\nrule above\n' })
  assert.deepEqual(parseFrontMatter('\ufeff---\r\ntitle: CRLF\r\n---  \r\nbody\r\n'), { data: { title: 'CRLF' }, body: 'body\r\n' })
  assert.deepEqual(parseFrontMatter('---\ntitle: End\n---'), { data: { title: 'End' }, body: '' })
  assert.deepEqual(parseFrontMatter('---\n---\nbody'), { data: {}, body: 'body' })
  assert.deepEqual(parseFrontMatter('---\n# only a comment\n---\nbody'), { data: {}, body: 'body' })
})

test('a file without front matter is all body', () => {
  assert.deepEqual(parseFrontMatter('# Title\n\ntext\n'), { data: {}, body: '# Title\n\ntext\n' })
  assert.deepEqual(parseFrontMatter('----\nnot a fence\n'), { data: {}, body: '----\nnot a fence\n' })
  assert.deepEqual(parseFrontMatter(''), { data: {}, body: '' })
})

test('YAML 1.2: dates stay text (checked later), yes/no are strings, no code runs', () => {
  const { data } = parseFrontMatter('---\ndate: 2024-01-02\ndraft: yes\nn: 0x10\nlabel: !custom value\n---\n')
  assert.deepEqual(data, { date: '2024-01-02', draft: 'yes', n: 16, label: 'value' })
  const polluting = parseFrontMatter('---\n__proto__: {polluted: true}\n---\n').data
  assert.equal(({} as Record<string, unknown>).polluted, undefined)
  assert.ok(Object.hasOwn(polluting, '__proto__'))
})

test('bad front matter is refused with a reason', () => {
  fails('---js\nmodule.exports = { title: process.exit(1) }\n---\n', /"---js" is not supported/)
  fails('---json\n{"title": "x"}\n---\n', /"---json" is not supported/)
  fails('---\ntitle: never closed\nbody\n', /no closing "---" line/)
  fails('---\ntitle: [a, b\n---\n', /not valid YAML: .*\(line 3\)/)
  fails('---\ntitle: a\ntitle: b\n---\n', /not valid YAML: Map keys must be unique \(line 3\)/)
  fails('---\n- a\n- b\n---\n', /not a mapping/)
  fails('---\njust text\n---\n', /not a mapping/)
  fails(`---\na: &a [x, x, x, x, x, x, x, x, x, x]\n${Array.from({ length: 12 }, (_, i) => `b${i}: &b${i} [${Array(10).fill(i === 0 ? '*a' : `*b${i - 1}`).join(', ')}]`).join('\n')}\n---\n`, /not valid YAML/)
})

test('dates: YAML timestamps and ISO 8601 strings; without a zone, UTC; impossible dates refused', () => {
  const cases: Array<[unknown, string | undefined]> = [
    ['2024-01-02', '2024-01-02T00:00:00.000Z'],
    ['2024-01-02T03:04:05Z', '2024-01-02T03:04:05.000Z'],
    ['2024-01-02t03:04:05.6789z', '2024-01-02T03:04:05.678Z'],
    ['2024-01-02T03:04:05+02:00', '2024-01-02T01:04:05.000Z'],
    ['2024-01-02T03:04:05-0530', '2024-01-02T08:34:05.000Z'],
    ['2024-01-02 03:04:05 +2', '2024-01-02T01:04:05.000Z'],
    ['2024-01-02 03:04', '2024-01-02T03:04:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    [' 2024-01-02 ', '2024-01-02T00:00:00.000Z'],
    ['2023-02-29', undefined],
    ['2024-13-01', undefined],
    ['2024-04-31', undefined],
    ['2024-01-02T24:00:00Z', undefined],
    ['2024-01-02T10:60Z', undefined],
    ['2024-01-02T10:00+25:00', undefined],
    ['2024-01-02T10:00+02:75', undefined],
    ['January 2, 2024', undefined],
    ['2024/01/02', undefined],
    ['yesterday', undefined],
    ['', undefined],
    [20240102, undefined],
    [true, undefined],
    [['2024-01-02'], undefined]
  ]
  for (const [value, iso] of cases) assert.equal(parseFrontMatterDate(value)?.toISOString(), iso, JSON.stringify(value))
})
