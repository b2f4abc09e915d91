// The reference model of the list queries, and the tables it is checked on
// (list-query-model.test.ts and the files beside it): random rows, filters and sorts as
// fast-check draws them, and in JavaScript which rows a query keeps, in which order.
import { after, before } from 'node:test'
import fc from 'fast-check'
import { DEFAULT_SORT, SORT_COLUMNS, sortOrder, type ListSort } from '../../src/contract/list-sort.js'
import { DEFAULT_SEARCH_SETTINGS } from '../../src/search/compiled-search.js'
import { mysqlServer, openTestStore, postgresServer, sqliteServer, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { startTiersOn, type Tiers } from '../helpers/tiers.js'

export const RUNS = Number(process.env.MODEL_RUNS ?? 60)

/** Free-form tags, some differing only by case (matched exactly). */
export const TAGS = ['C++', 'Node.js', 'PostgreSQL', 'sql', 'SQL', 'x y', 'été'] as const
/** Instants of the rows, a millisecond apart in places (every store keeps milliseconds). */
export const INSTANTS = [
  '2023-12-31T23:59:59.999Z', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:00.001Z', '2024-03-01T12:30:00.000Z', '2024-05-01T00:00:00.000Z', '2025-06-15T08:00:00.500Z'
] as const
/** Bounds as a client writes them, each with the instant it means. */
export const BOUNDS: ReadonlyArray<readonly [string, string]> = [
  ...INSTANTS.map((iso) => [iso, iso] as const),
  ['2024-01-01', '2024-01-01T00:00:00.000Z'], ['2024-05-01', '2024-05-01T00:00:00.000Z'], ['2024-03-01T14:30:00%2B02:00', '2024-03-01T12:30:00.000Z'],
  ['2023-12-31T19:00:00.0005-05:00', '2024-01-01T00:00:00.0005Z']
]

/**
 * Titles whose code point order differs from every collation's: case, trailing spaces, a
 * combining accent, an astral character (after U+FFFD in code points, before it in UTF-16 units).
 */
export const TITLES = ['a', 'a ', 'A', 'b', 'é', 'e\u0301', 'Z', '\u{1F600}', '\uFFFD', ''] as const
export const SORTS: readonly ListSort[] = SORT_COLUMNS.flatMap((column): ListSort[] => [column, `-${column}`])
/** Content words: at least 4 letters and no stop word (InnoDB indexes 3 and more), the same stem under every engine. */
export const WORDS = ['apple', 'brick', 'cloud', 'ember', 'fjord', 'grove'] as const

/** `words`: the post's content, which a search finds (the titles are for sorting). */
export interface Row { slug: string, title: string | null, words: readonly string[], tags: readonly string[] | null, publishedAt: string | null, updatedAt: string | null }

/** A search, and which contents it matches. */
export interface Search { text: string, matches: (words: readonly string[]) => boolean }

const word = fc.constantFrom(...WORDS)
export const search: fc.Arbitrary<Search> = fc.oneof(
  word.map((w) => ({ text: w, matches: (words: readonly string[]) => words.includes(w) })),
  fc.tuple(word, word).map(([a, b]) => ({ text: `${a} ${b}`, matches: (words: readonly string[]) => words.includes(a) && words.includes(b) })),
  fc.tuple(word, word).map(([a, b]) => ({ text: `${a} OR ${b}`, matches: (words: readonly string[]) => words.includes(a) || words.includes(b) })),
  fc.tuple(word, word).filter(([a, b]) => a !== b).map(([a, b]) => ({ text: `${a} -${b}`, matches: (words: readonly string[]) => words.includes(a) && !words.includes(b) }))
)

export const row = fc.record({
  title: fc.option(fc.constantFrom(...TITLES), { freq: 6 }),
  words: fc.subarray([...WORDS], { maxLength: 3 }),
  tags: fc.option(fc.subarray([...TAGS]), { freq: 6 }),
  publishedAt: fc.option(fc.constantFrom(...INSTANTS), { freq: 4 }),
  updatedAt: fc.option(fc.constantFrom(...INSTANTS), { freq: 4 })
})
export const slugText = fc.stringMatching(/^[a-zA-Z0-9-]{1,6}$/)
export const rows = fc.uniqueArray(slugText, { minLength: 2, maxLength: 14 })
  .chain((slugs) => fc.tuple(...slugs.map((slug) => row.map((r): Row => ({ slug, ...r })))))

/** Mostly absent, so that combinations still match some rows. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })
const tagSet = sometimes(fc.subarray([...TAGS], { minLength: 1, maxLength: 3 }))
const bound = sometimes(fc.constantFrom(...BOUNDS))
const sort = sometimes(fc.constantFrom(...SORTS))
export const query = fc.record({
  q: sometimes(search),
  tag: tagSet,
  tagAll: tagSet,
  tagNot: tagSet,
  publishedAfter: bound,
  publishedBefore: bound,
  updatedAfter: bound,
  sort,
  limit: fc.integer({ min: 1, max: 5 })
})
export type Query = typeof query extends fc.Arbitrary<infer Q> ? Q : never

/** A write between pages: a post (of the table's few slugs, or a new one) given new columns, or deleted. */
export const write = fc.record({
  kind: fc.constantFrom('set', 'set', 'delete'),
  slug: fc.oneof(slugText, fc.constantFrom('a', 'b', 'c')),
  columns: row
})
export type Write = typeof write extends fc.Arbitrary<infer W> ? W : never

/** The query's parameters, each written in its own order (the tiers put them in theirs). */
export function searchOf (q: Query): string {
  const parts: string[] = []
  if (q.tag !== null) parts.push(`tag=${q.tag.map(encodeURIComponent).reverse().join(',')}`)
  if (q.tagAll !== null) parts.push(`tag_all=${q.tagAll.map(encodeURIComponent).join(',')}`)
  if (q.tagNot !== null) parts.push(`tag_not=${q.tagNot.map(encodeURIComponent).join(',')}`)
  if (q.publishedAfter !== null) parts.push(`published_after=${q.publishedAfter[0]}`)
  if (q.publishedBefore !== null) parts.push(`published_before=${q.publishedBefore[0]}`)
  if (q.updatedAfter !== null) parts.push(`updated_after=${q.updatedAfter[0]}`)
  if (q.sort !== null) parts.push(`sort=${q.sort}`)
  if (q.q !== null) parts.push(`q=${encodeURIComponent(q.q.text)}`)
  return parts.join('&')
}

/** Compares instants as text of the same form, so that the half-millisecond bound counts. */
const micros = (iso: string): string => {
  const [whole = '', fraction = ''] = iso.slice(0, -1).split('.')
  return `${whole}.${fraction.padEnd(6, '0')}`
}

const bytewise = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** A row's value in the sort's column. */
export function sortValue (r: Row, sort: ListSort | null): string | null {
  const { column } = sortOrder(sort ?? DEFAULT_SORT)
  return column === 'published_at' ? r.publishedAt : column === 'updated_at' ? r.updatedAt : column === 'title' ? r.title : r.slug
}

/** The list order: by the column (code points; instants are text of one form), NULLs last either way, ties by slug bytewise. */
export function compareBy (sort: ListSort | null): (a: Row, b: Row) => number {
  const { descending } = sortOrder(sort ?? DEFAULT_SORT)
  return (a, b) => {
    const x = sortValue(a, sort)
    const y = sortValue(b, sort)
    if (x !== y) {
      if (x === null) return 1
      if (y === null) return -1
      return (descending ? -1 : 1) * bytewise(x, y)
    }
    return bytewise(a.slug, b.slug)
  }
}

/** The model: the rows the query keeps, in list order (default: newest first, undated last, ties by slug bytewise). */
export function expected (all: readonly Row[], q: Query): string[] {
  const holds = (r: Row, tag: string): boolean => r.tags?.includes(tag) === true
  const after = (value: string | null, b: readonly [string, string] | null): boolean => b === null || (value !== null && micros(value) > micros(b[1]))
  const before = (value: string | null, b: readonly [string, string] | null): boolean => b === null || (value !== null && micros(value) < micros(b[1]))
  return all.filter((r) =>
    (q.tag === null || q.tag.some((t) => holds(r, t))) &&
    (q.tagAll === null || q.tagAll.every((t) => holds(r, t))) &&
    (q.tagNot === null || !q.tagNot.some((t) => holds(r, t))) &&
    after(r.publishedAt, q.publishedAfter) && before(r.publishedAt, q.publishedBefore) && after(r.updatedAt, q.updatedAfter) &&
    (q.q === null || q.q.matches(r.words))
  ).sort(compareBy(q.sort)).map((r) => r.slug)
}

export interface Variant {
  /** Creates `posts`; the default table unless the variant needs another `tags` type. */
  table: (db: TestDatabase) => Promise<void>
  timestamp: (iso: string | null) => string
  tags: (tags: readonly string[] | null) => string
  /** Whether `title` may be NULL (the default table's may not). */
  nullTitles?: boolean
}

export const sqlText = (text: string): string => `'${text.replaceAll("'", "''")}'`
/** JSON `null` for none (the default table's `tags` is NOT NULL on SQLite and PostgreSQL): no array, no tag. */
export const jsonTags = (tags: readonly string[] | null): string => sqlText(JSON.stringify(tags))

export const DEFAULT_TABLE = async (db: TestDatabase): Promise<void> => {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate()
  await writer.close()
}

/** The default table with the store's own search index. */
export const INDEXED_TABLE = async (db: TestDatabase): Promise<void> => {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate({ search: DEFAULT_SEARCH_SETTINGS })
  await writer.close()
}

/** A variant's table as its tests see it. */
export interface ModelTable {
  /** The database, created before the tests, with the variant's `posts` table. */
  readonly db: () => TestDatabase
  /** Both tiers, serving it. */
  readonly tiers: () => Tiers
  /** The rows as this table can hold them. */
  readonly held: (all: readonly Row[]) => Row[]
  readonly insert: (all: readonly Row[]) => Promise<void>
  /** Replaces every row with `all`. */
  readonly load: (all: readonly Row[]) => Promise<void>
}

/** Declares the hooks of `variant`'s table in the describe that calls it, and returns what its tests share. */
export function useModelTable (server: TestServer, variant: Variant): ModelTable {
  let db: TestDatabase
  let tiers: Tiers
  before(async () => {
    db = await server.create()
    await variant.table(db)
    tiers = await startTiersOn(db)
  })
  after(async () => {
    await tiers?.close()
    await db?.drop()
  })

  const held = (all: readonly Row[]): Row[] => variant.nullTitles === true ? [...all] : all.map((r) => ({ ...r, title: r.title ?? 'T' }))
  const values = (r: Row): string =>
    `(${sqlText(r.slug)}, ${r.title === null ? 'NULL' : sqlText(r.title)}, ${sqlText(r.words.join(' '))}, ${variant.tags(r.tags)}, ${variant.timestamp(r.publishedAt)}, ${variant.timestamp(r.updatedAt)})`
  const insert = async (all: readonly Row[]): Promise<void> => {
    await db.exec(`INSERT INTO posts (slug, title, content, tags, published_at, updated_at) VALUES ${all.map(values).join(', ')}`)
  }

  async function load (all: readonly Row[]): Promise<void> {
    await db.exec('DELETE FROM posts')
    if (all.length > 0) await insert(all)
  }

  return { db: () => db, tiers: () => tiers, held, insert, load }
}

const isoText = (iso: string | null): string => iso === null ? 'NULL' : sqlText(iso)

/** The stores and tables the model is checked on. */
export const MODEL_VARIANTS: ReadonlyArray<{ name: string, server: TestServer, variant: Variant }> = [
  { name: 'SQLite', server: sqliteServer, variant: { table: DEFAULT_TABLE, timestamp: isoText, tags: jsonTags } },
  { name: 'SQLite with migrate --search', server: sqliteServer, variant: { table: INDEXED_TABLE, timestamp: isoText, tags: jsonTags } },
  { name: 'PostgreSQL', server: postgresServer, variant: { table: DEFAULT_TABLE, timestamp: isoText, tags: jsonTags } },
  { name: 'PostgreSQL with migrate --search', server: postgresServer, variant: { table: INDEXED_TABLE, timestamp: isoText, tags: jsonTags } },
  {
    name: 'PostgreSQL text[] tags',
    server: postgresServer,
    variant: {
      table: async (db) => {
        await db.exec(`CREATE TABLE posts (id serial PRIMARY KEY, slug text NOT NULL UNIQUE, title text, content text, tags text[],
        published_at timestamp, updated_at timestamptz)`)
      },
      timestamp: isoText,
      tags: (tags) => tags === null ? 'NULL' : `ARRAY[${tags.map(sqlText).join(', ')}]::text[]`,
      nullTitles: true
    }
  },
  {
    name: 'SQLite, titles NULL or case-insensitive',
    server: sqliteServer,
    variant: {
      table: async (db) => {
        await db.exec('CREATE TABLE posts (slug TEXT NOT NULL UNIQUE, title TEXT COLLATE NOCASE, content TEXT, tags TEXT, published_at TEXT, updated_at TEXT)')
      },
      timestamp: isoText,
      tags: jsonTags,
      nullTitles: true
    }
  },
  {
    name: 'MySQL with migrate --search',
    server: mysqlServer,
    variant: {
      table: INDEXED_TABLE,
      timestamp: (iso) => iso === null ? 'NULL' : sqlText(iso.slice(0, 23).replace('T', ' ')),
      tags: jsonTags
    }
  },
  {
    name: 'MySQL, titles NULL in a case-insensitive collation',
    server: mysqlServer,
    variant: {
      table: async (db) => {
        await db.exec(`CREATE TABLE posts (id INT AUTO_INCREMENT PRIMARY KEY, slug VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL UNIQUE,
        title VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci, content TEXT, tags JSON, published_at DATETIME(3), updated_at DATETIME(3))`)
      },
      timestamp: (iso) => iso === null ? 'NULL' : sqlText(iso.slice(0, 23).replace('T', ' ')),
      tags: jsonTags,
      nullTitles: true
    }
  }
]
