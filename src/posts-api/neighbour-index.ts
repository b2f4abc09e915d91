// Where each post stands in the default list order, for the links of detail answers
// (src/contract/neighbours.ts): the list's slugs, read once per posts version (one read of the
// slug column, under the publishing rule as every list), then a lookup per post. A detail body
// is built once per version too, so its links are exactly as fresh as its content.
import type { Neighbours } from '../contract/neighbours.js'
import type { PostStore } from '../store/store.js'

export interface NeighbourIndex {
  /** The neighbours of `slug` in the list; undefined when the list does not hold it. */
  neighboursOf: (slug: string) => Neighbours | undefined
}

export async function readNeighbourIndex (store: PostStore): Promise<NeighbourIndex> {
  const slugs: string[] = []
  for await (const posts of store.streamPosts({ fields: ['slug'] })) for (const post of posts) slugs.push(post.slug)
  const positions = new Map(slugs.map((slug, i) => [slug, i]))
  return {
    neighboursOf (slug) {
      const at = positions.get(slug)
      if (at === undefined) return undefined
      const prev = slugs[at - 1]
      const next = slugs[at + 1]
      return { ...(prev === undefined ? {} : { prev }), ...(next === undefined ? {} : { next }) }
    }
  }
}
