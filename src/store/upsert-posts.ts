// The import's writes: each value converted to what its column needs (or the post refused, in a
// dry run alike, before anything is written), then read the batch's rows, compare, write only
// what changed, in one
// transaction. Plain SELECT, INSERT and UPDATE work alike on every dialect, and never rewriting
// an unchanged row matters: any writing transaction moves the change token (PostgreSQL's is the
// transaction itself), so even an `INSERT … ON CONFLICT DO UPDATE … WHERE false` would.
import { isDeepStrictEqual } from 'node:util'
import type { Kysely, Transaction } from 'kysely'
import { describeColumnShapes, type ColumnShape } from './column-shapes.js'
import { ColumnValueError, columnParameter } from './column-values.js'
import type { DialectSpec, Tables } from './dialect-spec.js'
import type { RowNormaliser } from './normalise-row.js'
import type { JsonValue, PostUpsert, PostValue, UpsertOutcome } from './store.js'

/** Bound parameters per INSERT, well under every dialect's limit (SQLite: 32,766). */
const MAX_PARAMETERS = 30_000

export interface UpsertContext {
  db: Kysely<Tables>
  spec: DialectSpec
  normalise: RowNormaliser
}

export async function upsertPosts ({ db, spec, normalise }: UpsertContext, given: readonly PostUpsert[], dryRun: boolean): Promise<UpsertOutcome[]> {
  if (given.length === 0) return []
  const shapes = await describeColumnShapes(db, spec.dialect)
  // Nothing for a NOT NULL column with a default (an absent `author:`): the default for a new
  // post, the row's value for another, rather than a NULL the column refuses.
  const posts = given.map((post) => ({
    ...post,
    values: Object.fromEntries(Object.entries(post.values).filter(([column, value]) => {
      const shape = shapes.get(column)
      return !(value === null && shape?.notNull === true && shape.optional)
    })) as PostUpsert['values']
  }))
  const parameters = (values: Record<string, PostValue>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(values).map(([column, value]) => [column, columnParameter(spec, shapes.get(column), value)]))
  // Every post's values converted first: a value its column cannot hold refuses the batch, and
  // the caller writes it again one post at a time to find which.
  const converted = posts.map((post) => ({ stamped: parameters({ ...post.values, ...post.stampOnWrite }) }))
  const compare = async (reader: Kysely<Tables> | Transaction<Tables>): Promise<UpsertOutcome[]> => {
    const columns = [...new Set(posts.flatMap((p) => Object.keys(p.values)))]
    const rows = await reader.selectFrom('posts').select(columns as Array<'slug'>)
      .where('slug', 'in', posts.map((p) => p.values.slug)).execute()
    // Collations may match more loosely than slugs compare (MySQL *_ci): keep exact matches.
    const existing = new Map(rows.map((row) => normalise(row)).map((row) => [row.slug, row]))
    return posts.map((post) => {
      const row = existing.get(post.values.slug)
      if (row === undefined) return 'inserted'
      return Object.entries(post.values).every(([column, value]) => sameValue(row[column], value)) ? 'unchanged' : 'updated'
    })
  }
  const checkInserts = (outcomes: UpsertOutcome[]): void => {
    for (const [i, outcome] of outcomes.entries()) if (outcome === 'inserted') checkRequired(shapes, converted[i]?.stamped ?? {})
  }
  if (dryRun) {
    const outcomes = await compare(db)
    checkInserts(outcomes)
    return outcomes
  }
  return await db.transaction().execute(async (trx) => {
    const outcomes = await compare(trx)
    checkInserts(outcomes)
    const inserts = converted.filter((_, i) => outcomes[i] === 'inserted').map((p) => p.stamped)
    for (const group of groupByColumns(inserts)) {
      const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(group[0] ?? {}).length))
      for (let i = 0; i < group.length; i += perStatement) {
        await trx.insertInto('posts').values(group.slice(i, i + perStatement) as Array<Tables['posts']>).execute()
      }
    }
    for (const [i, post] of posts.entries()) {
      if (outcomes[i] !== 'updated') continue
      const { slug, ...changed } = converted[i]?.stamped ?? {}
      await trx.updateTable('posts').set(changed).where('slug', '=', post.values.slug).execute()
    }
    return outcomes
  })
}

/** A multi-row INSERT needs one column list: posts that set other columns go in another statement. */
function groupByColumns (rows: Array<Record<string, unknown>>): Array<Array<Record<string, unknown>>> {
  const groups = new Map<string, Array<Record<string, unknown>>>()
  for (const row of rows) {
    const key = JSON.stringify(Object.keys(row).sort())
    groups.set(key, [...(groups.get(key) ?? []), row])
  }
  return [...groups.values()]
}

/** An INSERT must give each NOT NULL column that has no default (nor numbers itself). */
function checkRequired (shapes: Map<string, ColumnShape>, row: Record<string, unknown>): void {
  for (const shape of shapes.values()) {
    if (!shape.optional && !(shape.name in row)) {
      throw new ColumnValueError(`column \`${shape.name}\` (${shape.type}) is NOT NULL without a default, and the file gives it no value`)
    }
  }
}

/**
 * Whether a stored value, as the store serves it, already is `wanted`. Timestamps compare as
 * instants (a `date` column's `2024-01-02` is midnight UTC), JSON by structure (jsonb reorders
 * keys), and numbers with the text or booleans with the integers some columns hold them as.
 */
function sameValue (stored: JsonValue | undefined, wanted: PostValue): boolean {
  if (stored === undefined) return false
  if (wanted instanceof Date) return typeof stored === 'string' && Date.parse(stored) === wanted.getTime()
  if (wanted === null || stored === null) return wanted === stored
  if (typeof wanted === 'object') return isDeepStrictEqual(typeof stored === 'string' ? parseJson(stored) : stored, wanted)
  if (typeof wanted === 'boolean') return stored === wanted || stored === (wanted ? 1 : 0)
  if (stored === wanted || String(stored) === String(wanted)) return true
  // `numeric`/DECIMAL columns are served as exact text: "12.50" holds 12.5.
  return typeof wanted === 'number' && typeof stored === 'string' && stored.trim() !== '' && Number(stored) === wanted
}

function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
