// Row versions where the store stamps every write of a row but says nothing of its content:
// PostgreSQL's `xmin` moves on an UPDATE that leaves the row as it was, which must change no
// version (a write that changes nothing sends nothing). So a version is the digest of the row as
// served (src/sync/row-version.ts), the same in every process whatever stamps it saw, and the
// stamp only says which rows to digest again: a read of the versions is one query of slugs and
// stamps, then the rows whose stamp moved since the last read (none between two commits that
// touched nothing served; every row once, at the first read).
import type { RawBuilder } from 'kysely'
import { rowVersion } from '../sync/row-version.js'
import { digestedPost, VERSION_COLUMN, visibleRows, type RowVersionReader, type RowVersionSource } from './row-versions.js'
import { rowsOfSlugs } from './rows-of-slugs.js'
import type { Post } from './store.js'

interface Digested {
  stamp: string
  digest: string
}

export function stampedRowVersions (source: RowVersionSource, stamp: RawBuilder<string>): RowVersionReader {
  const column = stamp.as(VERSION_COLUMN)
  // Slug → its row's digest at a stamp: the rows of the last state read, and those a versioned
  // read met since (at most one entry per row of the table).
  let known = new Map<string, Digested>()

  function digestAt (post: Post, at: string): string {
    const entry = known.get(post.slug)
    if (entry?.stamp === at) return entry.digest
    const digest = rowVersion(post)
    known.set(post.slug, { stamp: at, digest })
    return digest
  }

  /** The stamp a row was read with (taken off the row). */
  function stampOf (row: Record<string, unknown>): string {
    const at = String(row[VERSION_COLUMN])
    delete row[VERSION_COLUMN]
    return at
  }

  return {
    async read () {
      const stamps = await source.read(() => visibleRows(source).select(['slug', column]).execute())
      const next = new Map<string, Digested>()
      const moved: string[] = []
      for (const row of stamps) {
        const entry = known.get(row.slug)
        if (entry?.stamp === row[VERSION_COLUMN]) next.set(row.slug, entry)
        else moved.push(row.slug)
      }
      const rows = await rowsOfSlugs(moved, async (batch) => await source.read(() => source.selectServed().select(column).where('slug', 'in', batch).execute()))
      // A row that moved and is gone by this second query is left out (this state is the newer
      // one); one that moved again is digested as it is now.
      for (const row of rows) {
        const at = stampOf(row)
        const post = source.normalise(row)
        next.set(post.slug, { stamp: at, digest: digestAt(post, at) })
      }
      known = next
      return new Map([...next].map(([slug, { digest }]) => [slug, digest]))
    },
    // The digest is of the whole row as served: read it whole, with its stamp.
    versioned: (fields) => ({
      fields: undefined,
      column,
      of (row, normalise) {
        const at = stampOf(row)
        const post = normalise(row)
        return digestedPost(post, fields, digestAt(post, at))
      }
    })
  }
}
