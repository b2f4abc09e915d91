// The store's side of the publishing rule (src/publishing/publishing-rule.ts): the condition the
// public reads add under PUBLISHED_ONLY, at the store's clock; the change token labelled with the
// next scheduled instant; and the counts the start-up log reports.
import { sql, type Kysely, type RawBuilder } from 'kysely'
import { createPublishingRule, unsupportedPublishedAt } from '../publishing/publishing-rule.js'
import type { PublishingOptions, PublishingState } from '../publishing/publishing-options.js'
import { createSchedule } from '../publishing/schedule.js'
import type { Tables } from './dialect-spec.js'
import { StoreSchemaError, type ColumnInfo, type Dialect } from './store.js'

export interface PublishingReads {
  /** The condition a public read adds now; undefined when every row is public. */
  condition: () => RawBuilder<boolean> | undefined
  /** The change token, labelled with the next scheduled instant when the rule applies. */
  label: (token: string) => Promise<string>
  /** See PostStore.readNextScheduledInstant. */
  readNextScheduledInstant: () => Promise<number | undefined>
  /** See PostStore.readPublishingState. */
  readState: () => Promise<PublishingState>
}

export interface PublishingReadsOptions {
  db: Kysely<Tables>
  dialect: Dialect
  columns: readonly ColumnInfo[]
  publishing: PublishingOptions
  /** The store's read wrapper (failures classified). */
  read: <T>(query: () => Promise<T>) => Promise<T>
}

/** Rejects with StoreSchemaError when PUBLISHED_ONLY is asked of a table the rule cannot read. */
export function createPublishingReads ({ db, dialect, columns, publishing, read }: PublishingReadsOptions): PublishingReads {
  const now = publishing.now ?? Date.now
  const rule = createPublishingRule(dialect, columns)
  const unsupported = unsupportedPublishedAt(dialect, columns)
  const applied = publishing.publishedOnly && rule.columns.length > 0 ? rule : undefined
  if (applied !== undefined && unsupported !== undefined) throw new StoreSchemaError(`PUBLISHED_ONLY cannot apply: ${unsupported}`)

  async function readNextInstant (nowMs: number): Promise<number | undefined> {
    const { scheduled, instantMs } = rule
    if (scheduled === undefined || instantMs === undefined) return undefined
    const rows = await read(() => db.selectFrom('posts').select(sql<unknown>`MIN(${instantMs})`.as('next')).where(scheduled(nowMs)).execute())
    const next = rows[0]?.next
    return next === null || next === undefined ? undefined : Number(next)
  }

  const schedule = applied?.scheduled === undefined ? undefined : createSchedule(readNextInstant, now)
  return {
    condition: () => applied?.visible(now()),
    label: async (token) => schedule === undefined ? token : await schedule.label(token),
    readNextScheduledInstant: async () => schedule === undefined ? undefined : await readNextInstant(now()),
    async readState () {
      if (unsupported !== undefined) return { columns: rule.columns, hidden: undefined, unsupported }
      if (rule.columns.length === 0) return { columns: rule.columns, hidden: 0 }
      const rows = await read(() => db.selectFrom('posts')
        .select(sql<unknown>`COUNT(*)`.as('hidden')).where(sql<boolean>`NOT ${rule.visible(now())}`).execute())
      return { columns: rule.columns, hidden: Number(rows[0]?.hidden ?? 0) }
    }
  }
}

/** Before checkSchema: every row is public, nothing is scheduled. */
export const NO_PUBLISHING_READS: PublishingReads = {
  condition: () => undefined,
  label: async (token) => token,
  readNextScheduledInstant: async () => undefined,
  readState: async () => ({ columns: [], hidden: 0 })
}
