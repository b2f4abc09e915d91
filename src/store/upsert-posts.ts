// The import's writes: read the batch's rows, compare, write only what changed, in one
// transaction. Plain SELECT, INSERT and UPDATE work alike on every dialect, and never rewriting
// an unchanged row matters: any writing transaction moves the change token (PostgreSQL's is the
// transaction itself), so even an `INSERT … ON CONFLICT DO UPDATE … WHERE false` would.
import { isDeepStrictEqual } from 'node:util'
import type { Kysely, Transaction } from 'kysely'
import type { DialectSpec, Tables } from './kysely-post-store.js'
import type { RowNormaliser } from './normalise-row.js'
import type { JsonValue, PostUpsert, PostValue, UpsertOutcome } from './store.js'

/** Bound parameters per INSERT, well under every dialect's limit (SQLite: 32,766). */
const MAX_PARAMETERS = 30_000

export interface UpsertContext {
  db: Kysely<Tables>
  spec: DialectSpec
  normalise: RowNormaliser
}

export async function upsertPosts ({ db, spec, normalise }: UpsertContext, posts: readonly PostUpsert[], dryRun: boolean): Promise<UpsertOutcome[]> {
  if (posts.length === 0) return []
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
  if (dryRun) return await compare(db)
  return await db.transaction().execute(async (trx) => {
    const outcomes = await compare(trx)
    const parameters = (values: Record<string, PostValue>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(values).map(([column, value]) => [column, toParameter(spec, value)]))
    const inserts = posts.filter((_, i) => outcomes[i] === 'inserted').map((p) => parameters({ ...p.values, ...p.stampOnWrite }))
    for (const group of groupByColumns(inserts)) {
      const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(group[0] ?? {}).length))
      for (let i = 0; i < group.length; i += perStatement) {
        await trx.insertInto('posts').values(group.slice(i, i + perStatement) as Array<Tables['posts']>).execute()
      }
    }
    for (const [i, post] of posts.entries()) {
      if (outcomes[i] !== 'updated') continue
      const { slug, ...changed } = post.values
      await trx.updateTable('posts').set(parameters({ ...changed, ...post.stampOnWrite })).where('slug', '=', slug).execute()
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

function toParameter (spec: DialectSpec, value: PostValue): unknown {
  if (value instanceof Date) return spec.timestampParameter(value)
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  // better-sqlite3 binds no booleans; SQLite's own are 1 and 0.
  if (typeof value === 'boolean' && spec.dialect === 'sqlite') return value ? 1 : 0
  return value
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
