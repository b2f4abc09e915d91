// What the post API says at start-up about the publishing rule and the slugs: one line each,
// so an operator learns, before any reader does, that drafts are being served or that some
// posts cannot be reached through the front.
import type { Logger } from 'pino'
import { createSlugValidator } from '../contract/slug.js'
import type { PostStore } from '../store/store.js'
import { DECIDING_COLUMNS } from './publishing-rule.js'

export interface StartupReportOptions {
  publishedOnly: boolean
  /** The front's SLUG_PATTERN (the post API itself serves any slug). */
  slugPattern: RegExp
}

const rows = (count: number): string => count === 1 ? '1 row' : `${count} rows`

/** Logs the publishing rule's state on this table, and the slugs the front would refuse. */
export async function reportPublishing (store: PostStore, { publishedOnly, slugPattern }: StartupReportOptions, logger: Pick<Logger, 'info' | 'warn'>): Promise<void> {
  const state = await store.readPublishingState?.()
  if (state !== undefined) {
    const { columns, hidden } = state
    const by = columns.join(', ')
    if (publishedOnly && columns.length === 0) {
      logger.warn({ decidingColumns: columns }, `PUBLISHED_ONLY is true but posts has none of the columns that decide (${DECIDING_COLUMNS.join(', ')}): every row is public`)
    } else if (publishedOnly) {
      logger.info({ decidingColumns: columns, hidden }, `publishing rule on (PUBLISHED_ONLY): deciding columns ${by}; ${rows(hidden ?? 0)} hidden now`)
    } else if (columns.length > 0) {
      const count = hidden === undefined ? `rows (${state.unsupported ?? 'uncounted'})` : rows(hidden)
      logger.warn({ decidingColumns: columns, hidden }, `every row of posts is public: PUBLISHED_ONLY=true would hide ${count} by ${by} (drafts, scheduled, unpublished or deleted posts)`)
    }
  }
  const refused = await countRefusedSlugs(store, slugPattern)
  if (refused > 0) {
    logger.warn({ refusedSlugs: refused }, `${rows(refused)} of posts ${refused === 1 ? 'has' : 'have'} a slug the front refuses (SLUG_PATTERN ${slugPattern.source}): not reachable at /api/blog/SLUG`)
  }
}

/** Public rows whose slug the front's pattern refuses. */
async function countRefusedSlugs (store: PostStore, slugPattern: RegExp): Promise<number> {
  const accepted = createSlugValidator(slugPattern)
  let refused = 0
  for await (const posts of store.streamPosts({ fields: ['slug'] })) for (const { slug } of posts) if (!accepted(slug)) refused++
  return refused
}
