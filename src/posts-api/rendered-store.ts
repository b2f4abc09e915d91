// Rendered content and computed fields, as a PostStore in front of the store: a read with
// `formats=html,text` gets `C_html` and `C_text` for each Markdown column `C` it serves, and a
// `fields` list may name `reading_time`, `word_count` and `excerpt`, computed from the first
// Markdown column (and `summary`), which are read for it and left out again unless named too.
// Renderings come from a cache keyed by the content's hash (src/render/render-cache.ts): a post
// is rendered once per content, whatever commit moved the posts version meanwhile.
import { isComputedField, type ComputedField } from '../contract/formats.js'
import type { ListQuery } from '../contract/list-query.js'
import { computeFields } from '../render/computed-fields.js'
import type { RenderCache } from '../render/render-cache.js'
import { StoreQueryError, type KeyedPost, type Post, type PostStore, type VersionedPost } from '../store/store.js'

export interface RenderedStoreOptions {
  render: RenderCache
  /** The Markdown columns (MARKDOWN_COLUMNS); undefined: `content` when the table has it. */
  markdownColumns?: readonly string[]
}

/** How one query's rows are read and then shaped. */
interface Plan {
  /** What the store is asked. */
  storeQuery: ListQuery
  /** The post as served, from the row read. */
  shape: (row: Post) => Post
}

const SERVED_AS_IS: Plan['shape'] = (row) => row

export function withRenderedContent (store: PostStore, { render, markdownColumns }: RenderedStoreOptions): PostStore {
  const markdownOf = (): readonly string[] => (markdownColumns ?? ['content']).filter((name) => store.columns.includes(name))

  function plan<Q extends ListQuery> (query: Q): { storeQuery: Q, shape: Plan['shape'] } {
    const { fields, formats } = query
    const columns = store.columns
    const computed = (fields ?? []).filter((name): name is ComputedField => isComputedField(name) && !columns.includes(name))
    if (computed.length === 0 && formats === undefined) return { storeQuery: query, shape: SERVED_AS_IS }
    const markdown = markdownOf()
    const source = markdown[0]
    if (computed.length > 0 && source === undefined) {
      throw new StoreQueryError(`The fields parameter names ${computed[0]}, which is computed from a Markdown column, and the posts table has none.`)
    }
    const rendered = formats === undefined ? [] : markdown.filter((name) => fields === undefined || fields.includes(name))
    let storeQuery = query
    let kept: Set<string> | undefined
    if (fields !== undefined && computed.length > 0) {
      const needed = fields.filter((name) => !computed.includes(name as ComputedField))
      needed.push(source!)
      if (computed.includes('excerpt') && columns.includes('summary')) needed.push('summary')
      storeQuery = { ...query, fields: [...new Set(needed)].sort() }
      kept = new Set(fields)
    }
    const shape = (row: Post): Post => {
      const post: Record<string, unknown> = { ...row }
      for (const column of rendered) {
        const value = row[column]
        const rendering = typeof value === 'string' ? render.render(value) : undefined
        if (formats!.includes('html')) post[`${column}_html`] = rendering?.html ?? null
        if (formats!.includes('text')) post[`${column}_text`] = rendering?.text ?? null
      }
      if (computed.length > 0) {
        const value = row[source!]
        const rendering = render.render(typeof value === 'string' ? value : '')
        const values = computeFields(rendering.text, row.summary, rendering.wordCount)
        for (const name of computed) post[name] = values[name]
      }
      if (kept !== undefined) for (const name of Object.keys(row)) if (!kept.has(name)) delete post[name]
      return post as Post
    }
    return { storeQuery, shape }
  }

  async function * shaped<T> (batches: AsyncIterable<readonly T[]>, each: (item: T) => T): AsyncIterable<T[]> {
    for await (const batch of batches) yield batch.map(each)
  }

  // The reads shape their rows; everything else is the store's own (bound, so private state works).
  return {
    get dialect () { return store.dialect },
    get tracksChanges () { return store.tracksChanges },
    get columns () { return store.columns },
    checkQuery: (query: ListQuery) => store.checkQuery(plan(query).storeQuery),
    streamPosts (query: ListQuery = {}) {
      const { storeQuery, shape } = plan(query)
      return shaped(store.streamPosts(storeQuery), shape)
    },
    streamKeyedPosts (query: ListQuery = {}) {
      const { storeQuery, shape } = plan(query)
      return shaped(store.streamKeyedPosts(storeQuery), ({ key, post }: KeyedPost) => ({ key, post: shape(post) }))
    },
    async readPage (query: ListQuery & { limit: number }) {
      const { storeQuery, shape } = plan(query)
      const page = await store.readPage(storeQuery)
      return { posts: page.posts.map(shape), next: page.next }
    },
    async findPostBySlug (slug: string, query: ListQuery = {}) {
      const { storeQuery, shape } = plan(query)
      const post = await store.findPostBySlug(slug, storeQuery)
      return post === undefined ? undefined : shape(post)
    },
    async findAnyPostBySlug (slug: string, query: ListQuery = {}) {
      if (store.findAnyPostBySlug === undefined) return undefined
      const { storeQuery, shape } = plan(query)
      const post = await store.findAnyPostBySlug(slug, storeQuery)
      return post === undefined ? undefined : shape(post)
    },
    streamVersionedPosts (query: ListQuery = {}) {
      const { storeQuery, shape } = plan(query)
      return shaped(store.streamVersionedPosts(storeQuery), ({ post, version }: VersionedPost) => ({ post: shape(post), version }))
    },
    async findVersionedPostsBySlugs (slugs: readonly string[], query: ListQuery = {}) {
      const { storeQuery, shape } = plan(query)
      return (await store.findVersionedPostsBySlugs(slugs, storeQuery)).map(({ post, version }) => ({ post: shape(post), version }))
    },
    async findPostsBySlugs (slugs: readonly string[], query: ListQuery = {}) {
      const { storeQuery, shape } = plan(query)
      const posts = store.findPostsBySlugs === undefined
        ? (await Promise.all(slugs.map(async (slug) => await store.findPostBySlug(slug, storeQuery)))).filter((post) => post !== undefined)
        : await store.findPostsBySlugs(slugs, storeQuery)
      return posts.map(shape)
    },
    openSearchIndex: store.openSearchIndex?.bind(store),
    countPosts: (filter) => store.countPosts(filter),
    readNeighbours: store.readNeighbours?.bind(store),
    readPublishingState: store.readPublishingState?.bind(store),
    readNextScheduledInstant: store.readNextScheduledInstant?.bind(store),
    readChangeToken: () => store.readChangeToken(),
    readRowVersions: () => store.readRowVersions(),
    poolStats: () => store.poolStats?.(),
    probe: () => store.probe(),
    migrate: (options) => store.migrate(options),
    seed: () => store.seed(),
    checkSchema: () => store.checkSchema(),
    close: () => store.close(),
    upsertPosts: (...args) => store.upsertPosts(...args)
  }
}
