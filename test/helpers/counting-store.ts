// A post store in memory that counts the reads reaching it: the post API's "upstream calls", for
// tests that check no work is done for a request nobody will read.
import type { Post, PostStore } from '../../src/store/store.js'
import { rowVersion } from '../../src/sync/row-version.js'

export interface CountingStore extends PostStore {
  /**
   * Data reads so far (a post looked up, the list streamed); change-token reads are not counted, nor
   * the slugs read for a found post's neighbour links, which are part of building that post's answer.
   */
  reads: () => number
}

/** `posts`, in list order; no change tracking, so every answer reads the store afresh. */
export function createCountingStore (posts: readonly Post[]): CountingStore {
  let reads = 0
  /** Posts found whose neighbours' slugs are still to be read (requests may interleave). */
  let neighboursDue = 0
  return {
    dialect: 'sqlite',
    tracksChanges: false,
    reads: () => reads,
    async * streamPosts (query = {}) {
      if (neighboursDue > 0 && query.fields?.join(',') === 'slug') neighboursDue--
      else reads++
      // In batches of two, as a store streams them in batches of what it read at once.
      for (let i = 0; i < posts.length; i += 2) yield posts.slice(i, i + 2)
    },
    async * streamKeyedPosts () {
      reads++
      for (let i = 0; i < posts.length; i += 2) yield posts.slice(i, i + 2).map((post) => ({ key: { slug: post.slug }, post }))
    },
    async readPage ({ limit, after }) {
      reads++
      // In list order already: a page starts after the cursor's slug.
      const start = after === undefined ? 0 : posts.findIndex((post) => post.slug === after.slug) + 1
      const page = posts.slice(start, start + limit)
      const last = page.at(-1)
      return { posts: page, next: start + limit < posts.length && last !== undefined ? { slug: last.slug } : undefined }
    },
    async countPosts () {
      reads++
      return posts.length
    },
    checkQuery () {},
    async readChangeToken () {
      return undefined
    },
    async readRowVersions () {
      reads++
      return new Map(posts.map((post) => [post.slug, rowVersion(post)]))
    },
    async * streamVersionedPosts () {
      reads++
      for (let i = 0; i < posts.length; i += 2) yield posts.slice(i, i + 2).map((post) => ({ post, version: rowVersion(post) }))
    },
    async findVersionedPostsBySlugs (slugs) {
      reads++
      return posts.filter((post) => slugs.includes(post.slug)).map((post) => ({ post, version: rowVersion(post) }))
    },
    async probe () {},
    async findPostBySlug (slug) {
      reads++
      const post = posts.find((p) => p.slug === slug)
      if (post !== undefined) neighboursDue++
      return post
    },
    async migrate () {},
    async seed () {
      return 0
    },
    async checkSchema () {},
    async close () {},
    columns: ['slug', 'title', 'content'],
    async upsertPosts () {
      throw new Error('the post API never writes')
    }
  }
}
