// The rows of a list of slugs, read a batch of slugs at a time, in the list's order.

/** Slugs one read asks for at most: within every driver's bound on parameters. */
const SLUGS_PER_READ = 500

/**
 * The rows of `slugs` (a search's page, a delta's posts, the rows whose version moved), in that
 * order, absent ones left out, read by `read` a batch at a time. Only the exact slug is kept, as
 * findPostBySlug does (a collation may match more loosely).
 */
export async function rowsOfSlugs<Row extends Record<string, unknown>> (slugs: readonly string[], read: (batch: string[]) => Promise<Row[]>): Promise<Row[]> {
  const rows = new Map<string, Row>()
  for (let i = 0; i < slugs.length; i += SLUGS_PER_READ) {
    for (const row of await read(slugs.slice(i, i + SLUGS_PER_READ))) rows.set(row.slug as string, row)
  }
  return slugs.flatMap((slug): Row[] => {
    const row = rows.get(slug)
    return row === undefined ? [] : [row]
  })
}
