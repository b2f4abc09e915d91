// Property-based fuzzing of the list query string at the front: generated queries of
// valid, nearly valid and arbitrary parameters, through app.inject, against a fake upstream that
// records every call. Never a 5xx; a malformed value is a 400 invalid-query and no upstream call;
// a valid query is exactly one call, with the parameters in canonical form. The oracle reads the
// query with URLSearchParams and the rules of the list queries (docs/api.md), not with the code under test
// (but for the cursor, whose decoder test/contract/cursor.test.ts checks on its own).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { decodeCursor, encodeCursor } from '../../src/contract/cursor.js'
import { SORT_COLUMNS, type ListSort } from '../../src/contract/list-sort.js'
import { json } from '../helpers/fake-upstream.js'
import { assertProblem } from '../helpers/problem.js'
import { useInjectedFront } from '../helpers/injected-front.js'

const RUNS = 3000

const front = useInjectedFront((_req, res) => json(res, 200, [{ slug: 'a' }]))

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/
const TAG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
// eslint-disable-next-line no-control-regex
const NOT_IN_TAG = /[\u0000-\u001f\u007f-\u009f,]/
const ACCEPTED = ['limit', 'after', 'sort', 'fields', 'tag', 'tag_all', 'tag_not', 'published_after', 'published_before', 'updated_after', 'q', 'highlight', 'count']
const TAG_SETS = ['tag', 'tag_all', 'tag_not'] as const
const SORTS: readonly string[] = SORT_COLUMNS.flatMap((column) => [column, `-${column}`])
/** Searches the grammar takes, and near misses it refuses (nothing left to search for, too long). */
const SEARCHES = ['rust', 'rust async', '"a phrase" OR b', 'node.js', 'c++ -java']
const NOT_SEARCHES = ['', '-rust', '+++', '-"a b"', 'a '.repeat(251)]

/** A tag set's canonical text: 1 to 20 tags of 1 to 100 characters, no comma nor control character, distinct, sorted bytewise, percent-encoded. */
function canonicalTags (text: string): string | undefined {
  const tags = text.split(',')
  if (tags.length > 20 || !tags.every((tag) => tag !== '' && [...tag].length <= 100 && !NOT_IN_TAG.test(tag))) return undefined
  return [...new Set(tags)].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))).map(encodeURIComponent).join(',')
}

/** The upstream path a query must cause, or undefined when one of its values is malformed. */
function expectedUpstreamPath (search: string): string | undefined {
  const params = new URLSearchParams(search)
  const one = (name: string): string | null | false => {
    const values = params.getAll(name)
    return values.length > 1 ? false : values[0] ?? null
  }
  const names = [...params.keys()]
  if (names.some((name) => !ACCEPTED.includes(name)) || new Set(names).size !== names.length) return undefined
  const [limit, cursor, sort, fields, q, highlight] = [one('limit'), one('after'), one('sort'), one('fields'), one('q'), one('highlight')]
  if (limit === false || cursor === false || sort === false || fields === false || q === false || highlight === false) return undefined
  if (sort !== null && !SORTS.includes(sort)) return undefined
  if (q !== null && !SEARCHES.includes(q)) return undefined
  if (highlight !== null && (highlight !== 'true' || q === null)) return undefined
  const parts: string[] = []
  if (limit !== null) {
    if (!/^[1-9][0-9]*$/.test(limit) || Number(limit) > 1000) return undefined
    parts.push(`limit=${limit}`)
  }
  if (cursor !== null) {
    const key = decodeCursor(cursor)
    // A cursor names its order, unless it is the default one; a search without a sort is in its relevance order, whose cursors carry a rank.
    const order = sort === null ? (q === null ? undefined : 'q') : sort === '-published_at' ? undefined : sort
    if (key === undefined || (key.rank === undefined ? key.sort : 'q') !== order) return undefined
    parts.push(`after=${cursor}`)
  }
  if (sort !== null) parts.push(`sort=${sort}`)
  if (fields !== null) {
    const names = fields.split(',')
    if (names.length > 100 || !names.every((name) => IDENTIFIER.test(name))) return undefined
    parts.push(`fields=${[...new Set([...names, 'slug'])].sort().join(',')}`)
  }
  for (const name of TAG_SETS) {
    const text = one(name)
    if (text === false) return undefined
    if (text === null) continue
    const tags = canonicalTags(text)
    if (tags === undefined) return undefined
    parts.push(`${name}=${tags}`)
  }
  if (q !== null) parts.push(`q=${encodeURIComponent(q)}`)
  if (highlight !== null) parts.push('highlight=true')
  return parts.length === 0 ? '/api/posts' : `/api/posts?${parts.join('&')}`
}

const smallText = fc.string({ maxLength: 12, unit: 'binary' })
const identifier = fc.stringMatching(IDENTIFIER, { size: 'xsmall' })
const cursorValue = fc.oneof(fc.constant(undefined), fc.constant(null), fc.double({ noNaN: true }), smallText, fc.date({ noInvalidDate: true }).map((d) => d.toISOString()))
const cursorSlug = fc.oneof({ weight: 4, arbitrary: fc.stringMatching(TAG, { size: 'xsmall' }) }, { weight: 1, arbitrary: smallText })
/** Mostly of the default order, which most queries are in; then of a sort, or of a search's relevance order. */
const cursor = fc.oneof(
  { weight: 6, arbitrary: fc.record({ slug: cursorSlug, value: cursorValue, sort: fc.option(fc.constantFrom(...SORTS), { freq: 2 }) }) },
  { weight: 1, arbitrary: fc.record({ slug: cursorSlug, rank: fc.double({ noNaN: true, noDefaultInfinity: true }) }) }
).map((key) => encodeCursor('rank' in key
  ? { slug: key.slug, rank: key.rank === 0 ? 0 : key.rank }
  : key.sort === null || key.sort === '-published_at'
    ? (key.value === undefined ? { slug: key.slug } : { slug: key.slug, publishedAt: key.value })
    : { slug: key.slug, sort: key.sort as ListSort, ...(key.value === undefined || key.sort.endsWith('slug') ? {} : { value: key.value }) }))

/** Mostly valid values (so that whole queries of several parameters are often valid), and their near misses. */
const value: Record<string, fc.Arbitrary<string>> = {
  limit: fc.oneof(
    { weight: 4, arbitrary: fc.integer({ min: 1, max: 1000 }).map(String) },
    { weight: 1, arbitrary: fc.oneof(fc.integer({ min: -2, max: 1002 }).map(String), fc.constantFrom('0', '1', '1000', '1001', '', '01', '1.5', '+3', ' 5', '1e2', '0x10', '１'), smallText) }
  ),
  after: fc.oneof(
    { weight: 4, arbitrary: cursor },
    { weight: 1, arbitrary: fc.oneof(cursor.chain((c) => fc.tuple(fc.nat(c.length), fc.string({ minLength: 1, maxLength: 1 })).map(([i, ch]) => c.slice(0, i) + ch + c.slice(i + 1))), smallText) }
  ),
  sort: fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...SORTS) }, { weight: 1, arbitrary: fc.oneof(fc.constantFrom('', '-', '--title', 'Title', 'title,slug', '+title', 'id'), smallText) }),
  q: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...SEARCHES) }, { weight: 1, arbitrary: fc.constantFrom(...NOT_SEARCHES) }),
  highlight: fc.oneof({ weight: 3, arbitrary: fc.constant('true') }, { weight: 1, arbitrary: fc.constantFrom('', 'TRUE', 'yes', '1') }),
  fields: fc.oneof(
    { weight: 4, arbitrary: fc.array(identifier, { minLength: 1, maxLength: 4 }).map((names) => names.join(',')) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom('', ',', 'title,', 'a b', 'a-b', '1a'), smallText) }
  ),
  ...Object.fromEntries(TAG_SETS.map((name) => [name, fc.oneof(
    { weight: 4, arbitrary: fc.array(fc.oneof(fc.stringMatching(TAG, { size: 'xsmall' }), fc.constantFrom('C++', 'Node.js', 'SQL', 'x y', 'été')), { minLength: 1, maxLength: 3 }).map((tags) => tags.join(',')) },
    { weight: 1, arbitrary: fc.oneof(fc.constantFrom('', ',', 'a,', 'a,,b', 'a\u0001', 'a'.repeat(101)), smallText) }
  )]))
}

/** One `name=value` pair: a known parameter (possibly twice over the query) or an unknown one, percent-encoded or raw where that is safe. */
const pair = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('limit', 'after', 'sort', 'fields', ...TAG_SETS).chain((name) => fc.tuple(fc.constant(name), value[name] ?? smallText)) },
  { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('page', 'offset', 'Limit', 'fields[]', 'tags', ''), smallText), smallText) }
).chain(([name, text]) => fc.boolean().map((raw) => {
  const encode = (s: string): string => raw && /^[\w,.~-]*$/.test(s) ? s : encodeURIComponent(s)
  return `${encode(name)}=${encode(text)}`
}))

/** A search, often with `highlight=true` (which needs one); now and then `highlight` alone. */
const searchPair = fc.tuple(value.q ?? smallText, fc.boolean()).map(([text, highlighted]) => `q=${encodeURIComponent(text)}${highlighted ? '&highlight=true' : ''}`)
const highlightPair = (value.highlight ?? smallText).map((text) => `highlight=${encodeURIComponent(text)}`)

const query = fc.array(fc.oneof({ weight: 10, arbitrary: pair }, { weight: 2, arbitrary: searchPair }, { weight: 1, arbitrary: highlightPair }), { maxLength: 4 })
  .map((pairs) => pairs.join('&'))

test(`${RUNS} generated list queries: no 5xx; malformed: 400 and no upstream call; valid: one call in canonical form`, { timeout: 120_000 }, async (t) => {
  const seen = { valid: 0, malformed: 0, withParameters: 0 }
  const seed = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED)
  await fc.assert(fc.asyncProperty(query, async (search) => {
    const expected = expectedUpstreamPath(search)
    const start = front.upstream.requests.length
    const response = await front.app.inject({ method: 'GET', url: `/api/blog?${search}` })
    const hits = front.upstream.requests.slice(start).map((r) => r.url ?? '')
    assert.ok(response.statusCode < 500, `${search}: ${response.statusCode} ${response.body}`)
    if (expected === undefined) {
      seen.malformed++
      assertProblem({ status: response.statusCode, headers: response.headers as Record<string, string>, text: response.body, json: () => JSON.parse(response.body) }, 'invalid-query')
      assert.deepEqual(hits, [], `no upstream call for ${search}`)
    } else {
      seen.valid++
      if (expected !== '/api/posts') seen.withParameters++
      assert.equal(response.statusCode, 200, `${search}: ${response.body}`)
      assert.deepEqual(hits, [expected], search)
    }
  }), { numRuns: RUNS, includeErrorInReport: true, ...(seed === undefined ? {} : { seed }) })
  t.diagnostic(`queries: ${JSON.stringify(seen)}`)
  // The generators must keep reaching both branches, or the oracle checks little.
  assert.ok(seen.malformed >= RUNS * 0.2, 'at least 20% malformed')
  assert.ok(seen.withParameters >= RUNS * 0.2, 'at least 20% valid with parameters')
})
