// Every tag with its number of posts, for tag clouds and archive pages: the post API serves it at
// TAGS_PATH, the front at FRONT_TAGS_PATH. Most used first, ties by tag (bytewise).

export const TAGS_PATH = '/api/posts/tags'
export const FRONT_TAGS_PATH = '/api/tags'

export interface TagCount {
  tag: string
  count: number
}

/** Whether `value` is an answer of TAGS_PATH (the front checks the upstream's). */
export function isTagCounts (value: unknown): value is TagCount[] {
  return Array.isArray(value) && value.every((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) return false
    const { tag, count } = entry as Record<string, unknown>
    return typeof tag === 'string' && typeof count === 'number' && Number.isSafeInteger(count) && count > 0
  })
}

/** The tags of a post's `tags` value: a JSON array's strings (a store may hand the JSON over as text), each once. */
export function tagsOf (value: unknown): Set<string> {
  let tags = value
  if (typeof tags === 'string') {
    try {
      tags = JSON.parse(tags)
    } catch {
      return new Set()
    }
  }
  return new Set(Array.isArray(tags) ? tags.filter((tag): tag is string => typeof tag === 'string') : [])
}

/** Counts, most used first, ties by tag bytewise. */
export function countTags (posts: Iterable<unknown>): TagCount[] {
  const counts = new Map<string, number>()
  for (const tags of posts) {
    for (const tag of tagsOf(tags)) counts.set(tag, (counts.get(tag) ?? 0) + 1)
  }
  return [...counts].map(([tag, count]) => ({ tag, count }))
    .sort((a, b) => b.count - a.count || Buffer.compare(Buffer.from(a.tag), Buffer.from(b.tag)))
}
