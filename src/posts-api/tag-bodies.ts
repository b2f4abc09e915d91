// The body of TAGS_PATH: every tag with its number of posts, counted from the list's own rows
// (so whatever keeps a post out of the list keeps it out of the counts), once per change token.
import { countTags } from '../contract/tag-counts.js'
import { createRepresentation, type Representation } from '../http/representation.js'
import type { PostStore } from '../store/store.js'

export interface TagBodies {
  /** The body under `token` (undefined: built now, never kept). Rejects as the store's reads do. */
  body: (token: string | undefined) => Promise<Representation>
}

export function createTagBodies (store: PostStore, gated: <T>(read: () => Promise<T>) => Promise<T>): TagBodies {
  let built: { token: string, body: Promise<Representation> } | undefined

  async function build (): Promise<Representation> {
    // A table without `tags` has no tags.
    const tags = !store.columns.includes('tags')
      ? []
      : await gated(async () => {
        const values: unknown[] = []
        for await (const posts of store.streamPosts({ fields: ['tags'] })) for (const post of posts) values.push(post.tags)
        return values
      })
    return createRepresentation(Buffer.from(JSON.stringify(countTags(tags))))
  }

  return {
    async body (token) {
      if (token === undefined) return await build()
      if (built?.token !== token) {
        const body = build()
        built = { token, body }
        // A failed build is not kept: the next request builds again.
        body.catch(() => { if (built?.body === body) built = undefined })
      }
      return await built.body
    }
  }
}
