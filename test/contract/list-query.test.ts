// The list parameters both tiers share: parsing and canonical form (the cursor's own tests are
// cursor.test.ts's).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { canonicalSearch, nextLink, parseListQuery, parsePostQuery } from '../../src/contract/list-query.js'
import { encodeCursor } from '../../src/contract/cursor.js'
import { ProblemError } from '../../src/contract/problems.js'
import { SORT_COLUMNS } from '../../src/contract/list-sort.js'

const problemOf = (run: () => unknown): string => {
  try {
    run()
  } catch (err) {
    assert.ok(err instanceof ProblemError && err.kind === 'invalid-query')
    return err.message
  }
  return assert.fail('no problem')
}

test('parameters are read from the request target, in any order and spelling, into one canonical form', () => {
  const cursor = encodeCursor({ slug: 'b', publishedAt: null })
  assert.deepEqual(parseListQuery('/api/blog'), {})
  assert.deepEqual(parseListQuery('/api/blog?'), {})
  assert.match(problemOf(() => parseListQuery('/api/blog?x=1&limitx=2&Limit=0')), /^Unknown parameters "x", "limitx", "Limit"\. The accepted/)
  assert.match(problemOf(() => parseListQuery(`/api/blog?${'x'.repeat(500)}=1`)), new RegExp(`^Unknown parameter "${'x'.repeat(100)}"\\. `))
  assert.match(problemOf(() => parseListQuery(`/api/blog?${Array.from({ length: 20 }, (_, i) => `p${i}=1`).join('&')}`)), /"p9" and more\. /)
  const query = parseListQuery(`/api/blog?tag=node-js&fields=title%2Cslug,author,title&after=${cursor}&limit=20`)
  assert.deepEqual(query, { limit: 20, after: { slug: 'b', publishedAt: null }, fields: ['author', 'slug', 'title'], tag: ['node-js'] })
  assert.equal(canonicalSearch(query), `?limit=20&after=${cursor}&fields=author,slug,title&tag=node-js`)
  assert.equal(canonicalSearch({}), '')
  assert.equal(canonicalSearch(parseListQuery('/x?fields=Title,_x,slug')), '?fields=Title,_x,slug')
  assert.equal(nextLink('/api/blog', { limit: 2, tag: ['a'] }, { slug: 'z' }), `</api/blog?limit=2&after=${encodeCursor({ slug: 'z' })}&tag=a>; rel="next"`)
  assert.deepEqual(parsePostQuery('/api/blog/a?limit=0&tag=&fields=title'), { fields: ['slug', 'title'] })
  assert.deepEqual(parsePostQuery('/api/blog/a?limit=0'), {})
  const titled = encodeCursor({ slug: 'b', sort: '-title', value: 'B' })
  const sorted = parseListQuery(`/api/blog?sort=-title&limit=2&after=${titled}`)
  assert.deepEqual(sorted, { limit: 2, after: { slug: 'b', sort: '-title', value: 'B' }, sort: '-title' })
  assert.equal(canonicalSearch(sorted), `?limit=2&after=${titled}&sort=-title`)
  assert.equal(nextLink('/api/blog', { limit: 2, sort: 'slug' }, { slug: 'z', sort: 'slug' }), `</api/blog?limit=2&after=${encodeCursor({ slug: 'z', sort: 'slug' })}&sort=slug>; rel="next"`)
})

test('filters take one canonical form: tags distinct and sorted bytewise, percent-encoded; instants in UTC', () => {
  const query = parseListQuery('/api/blog?updated_after=2024-05-01T09:30:00.120%2B02:00&tag_not=b,a,b&tag=Node.js,C%2B%2B,%C3%A9t%C3%A9&count=exact&published_before=2024-05-01&tag_all=x%20y')
  assert.deepEqual(query, {
    tag: ['C++', 'Node.js', 'été'], tagAll: ['x y'], tagNot: ['a', 'b'], publishedBefore: '2024-05-01T00:00:00Z', updatedAfter: '2024-05-01T07:30:00.12Z', count: 'exact'
  })
  assert.equal(canonicalSearch(query), '?tag=C%2B%2B,Node.js,%C3%A9t%C3%A9&tag_all=x%20y&tag_not=a,b&published_before=2024-05-01T00:00:00Z&updated_after=2024-05-01T07:30:00.12Z&count=exact')
  assert.deepEqual(parseListQuery(`/api/blog${canonicalSearch(query)}`), query)
  assert.equal(parseListQuery('/x?published_after=2024-01-01T00:30:00.000001-01:00').publishedAfter, '2024-01-01T01:30:00.000001Z')
  assert.equal(parseListQuery('/x?published_after=0000-01-01T00:00:00Z').publishedAfter, '0000-01-01T00:00:00Z')
})

test('a malformed value is an invalid-query problem naming its parameter', () => {
  for (const [search, parameter] of [
    ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=1000', ''], ['limit=1', ''], ['limit=+1', 'limit'], ['limit=1&limit=1', 'limit'],
    ['after=x', 'after'], ['fields=a,b', ''], [`fields=${Array.from({ length: 101 }, (_, i) => `f${i}`).join(',')}`, 'fields'],
    [`fields=${'a'.repeat(63)}`, ''], [`fields=${'a'.repeat(64)}`, 'fields'], ['tag=a-1', ''], ['tag=C%2B%2B', ''], ['tag=Node.js,PostgreSQL', ''], [`tag=${'a'.repeat(100)}`, ''], [`tag=${'é'.repeat(100)}`, ''],
    [`tag=${'a'.repeat(101)}`, 'tag'], ['tag=', 'tag'], ['tag=a,', 'tag'], ['tag=,a', 'tag'], ['tag=a%00', 'tag'], ['tag=a%0Ab', 'tag'], ['tag=%C2%85', 'tag'],
    [`tag=${Array.from({ length: 21 }, (_, i) => `t${i}`).join(',')}`, 'tag'], [`tag_all=${Array.from({ length: 20 }, (_, i) => `t${i}`).join(',')}`, ''],
    ['tag_all=', 'tag_all'], ['tag_not=a,,b', 'tag_not'], ['tag_not=%01', 'tag_not'],
    ['published_after=2024-05-01', ''], ['published_after=2024-05-01T09:30:00Z', ''], ['published_before=2024-05-01T09:30:00.123456%2B02:00', ''],
    ['updated_after=2024-02-29t23:59:59.999999999z', ''], ['published_after=2024-05-01T09:30:00+02:00', 'published_after'],
    ['published_after=2023-02-29', 'published_after'], ['published_after=2024-05-01T24:00:00Z', 'published_after'], ['published_after=2024-05-01T23:59:60Z', 'published_after'],
    ['published_before=2024-05-01T09:30Z', 'published_before'], ['published_before=2024-05-01T09:30:00', 'published_before'], ['updated_after=1714550400', 'updated_after'],
    ['updated_after=', 'updated_after'], ['updated_after=2024-5-1', 'updated_after'], ['published_after=9999-12-31T23:00:00-02:00', 'published_after'],
    ['count=exact', ''], ['count=', 'count'], ['count=estimated', 'count'], ['count=EXACT', 'count'],
    ...[...SORT_COLUMNS, ...SORT_COLUMNS.map((c) => `-${c}`)].map((sort) => [`sort=${sort}`, ''] as const),
    ['sort=', 'sort'], ['sort=-', 'sort'], ['sort=--title', 'sort'], ['sort=Title', 'sort'], ['sort=%2Btitle', 'sort'], ['sort=title,slug', 'sort'], ['sort=id', 'sort'],
    ['sort=title&sort=slug', 'sort'], [`sort=title&after=${encodeCursor({ slug: 'a', publishedAt: null })}`, 'after'],
    [`after=${encodeCursor({ slug: 'a', sort: 'title', value: 'x' })}`, 'after'], [`sort=-title&after=${encodeCursor({ slug: 'a', sort: 'title', value: 'x' })}`, 'after'],
    [`sort=title&after=${encodeCursor({ slug: 'a', sort: 'title', value: 'x' })}`, ''], [`sort=-published_at&after=${encodeCursor({ slug: 'a', publishedAt: null })}`, '']
  ] as const) {
    if (parameter === '') parseListQuery(`/?${search}`)
    else assert.match(problemOf(() => parseListQuery(`/?${search}`)), new RegExp(`\\b${parameter}\\b`), search)
  }
})

test('q and highlight: checked by the grammar, written back in canonical form; a search pages with its own cursors, or with its sort\'s', () => {
  const refused = (target: string): void => {
    assert.throws(() => parseListQuery(target), (err: unknown) => err instanceof ProblemError && err.kind === 'invalid-query', target)
  }
  const query = parseListQuery('/api/blog?highlight=true&q=rust%20%22async%20await%22&limit=2&tag=b')
  assert.deepEqual(query, { q: 'rust "async await"', highlight: true, limit: 2, tag: ['b'] })
  assert.equal(canonicalSearch(query), '?limit=2&tag=b&q=rust%20%22async%20await%22&highlight=true')
  const searchCursor = encodeCursor({ slug: 'a', rank: 1.5 })
  assert.deepEqual(parseListQuery(`/api/blog?q=rust&after=${searchCursor}`).after, { slug: 'a', rank: 1.5 })
  // A list's cursor cannot resume a search, nor a search's a list.
  refused(`/api/blog?after=${searchCursor}`)
  refused(`/api/blog?q=rust&after=${encodeCursor({ slug: 'a', publishedAt: null })}`)
  refused(`/api/blog?q=rust&after=${encodeCursor({ slug: 'a', sort: 'title', value: 'x' })}`)
  // With a sort, a search is in that order and takes that order's cursors, never a relevance one.
  const titled = encodeCursor({ slug: 'a', sort: 'title', value: 'x' })
  assert.deepEqual(parseListQuery(`/api/blog?q=rust&sort=title&after=${titled}`), { q: 'rust', sort: 'title', after: { slug: 'a', sort: 'title', value: 'x' } })
  assert.equal(canonicalSearch(parseListQuery(`/api/blog?q=rust&sort=title&after=${titled}`)), `?after=${titled}&sort=title&q=rust`)
  assert.deepEqual(parseListQuery(`/api/blog?q=rust&sort=-published_at&after=${encodeCursor({ slug: 'a', publishedAt: null })}`).after, { slug: 'a', publishedAt: null })
  refused(`/api/blog?q=rust&sort=title&after=${searchCursor}`)
  refused(`/api/blog?q=rust&sort=-published_at&after=${searchCursor}`)
  refused(`/api/blog?q=rust&sort=-title&after=${titled}`)
  refused(`/api/blog?sort=title&after=${searchCursor}`)
  refused(`/api/blog?q=${'a'.repeat(501)}`)
  refused(`/api/blog?q=${Array.from({ length: 33 }, (_, i) => `w${i}`).join('+')}`)
  refused('/api/blog?q=-rust')
  refused('/api/blog?q=')
  refused('/api/blog?highlight=true')
  refused('/api/blog?q=rust&highlight=yes')
  refused('/api/blog?q=a&q=b')
})

test('fields: the names given, slug among them, distinct and sorted bytewise, however often the same value comes', () => {
  const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/)
  // Values are remembered by their text, a few dozen at a time: many distinct ones, each asked for again.
  fc.assert(fc.property(fc.array(fc.array(name, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 100 }), (lists) => {
    for (const names of [...lists, ...lists]) {
      const expected = [...new Set([...names, 'slug'])].sort()
      assert.deepEqual(parseListQuery(`/api/blog?fields=${names.join(',')}`).fields, expected)
    }
  }), { numRuns: 50 })
})
