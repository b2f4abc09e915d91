// What the store takes from the settings for the publishing rule.

export interface PublishingOptions {
  /** Hide, on every public read, the rows the rule hides (PUBLISHED_ONLY); otherwise every row is public. */
  publishedOnly: boolean
  /** The post API's clock, in ms since the epoch (injected in tests). */
  now?: () => number
}

/** What the rule would decide on this table now, for the start-up log. */
export interface PublishingState {
  /** The deciding columns the table has (empty: the rule hides nothing here). */
  columns: readonly string[]
  /** Rows the rule hides now; undefined with `unsupported` when the rule cannot be applied to this table. */
  hidden: number | undefined
  /** Why the rule cannot be applied to this table (PUBLISHED_ONLY then refuses to start). */
  unsupported?: string
}
