// `seed`: the sample posts a table lacks, inserted (a fresh default database, `blog-read-api seed`).
import type { Kysely } from 'kysely'
import type { DialectSpec, Tables } from './dialect-spec.js'
import { SAMPLE_POSTS } from './sample-posts.js'

/** Inserts the sample posts whose slug is not there yet; returns how many. */
export async function seedSamplePosts (db: Kysely<Tables>, spec: DialectSpec): Promise<number> {
  const existing = new Set((await db.selectFrom('posts').select('slug').execute()).map((r) => r.slug))
  const missing = SAMPLE_POSTS.filter((p) => !existing.has(p.slug))
  if (missing.length === 0) return 0
  await db.insertInto('posts').values(missing.map((p) => ({
    ...p,
    tags: JSON.stringify(p.tags),
    published_at: spec.timestampParameter(p.published_at),
    updated_at: spec.timestampParameter(p.updated_at)
  }))).execute()
  return missing.length
}
