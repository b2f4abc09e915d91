// The post API's sync route, `GET /api/posts/changes`: without `since` every post and the token of
// the state they make up; with it, the posts added or changed since and the slugs removed; a
// token this process does not hold is a 410 `sync-expired`. With `Accept: text/event-stream`, the
// live stream of changes (src/sync/change-hub.ts), resuming from `Last-Event-ID` or `since`.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { POSTS_CHANGES_PATH, parseChangesQuery, type ChangesQuery } from '../sync/changes-query.js'
import { canonicalSearch } from '../contract/list-query.js'
import { sendProblem } from '../http/app.js'
import { JSON_CONTENT_TYPE } from '../http/representation.js'
import { createBuildCache } from '../lib/build-cache.js'
import { resumedStream } from '../lib/resumed-stream.js'
import { textInChunks } from '../lib/text-chunks.js'
import type { Post, PostStore } from '../store/store.js'
import type { Change } from '../sync/change.js'
import { openEventStream, resumeFrom, wantsEventStream } from '../sync/event-stream.js'
import type { PostsSync } from '../sync/posts-sync.js'
import { SYNC_EXPIRED_DETAIL } from '../sync/sse-frame.js'

/** Up to this many upserted posts are read one by one; more, from one pass over the list. */
const LOOKUPS_AT_MOST = 50
/** Deltas kept (each a `since`, `until` and `fields`): clients that sync on a schedule ask the same ones. */
const MAX_CACHED_DELTAS = 256
const MAX_CACHED_DELTA_BYTES = 32 * 1024 * 1024

export interface ChangesRouteOptions {
  sync: PostsSync
  /** The store as the list reads it (rendered content, computed fields). */
  store: PostStore
  /** The app's store read: failures become their problems (400, 503). */
  read: <T>(query: () => Promise<T>) => Promise<T>
  schema: object
}

export function registerChangesRoute (api: FastifyInstance, { sync, store, read, schema }: ChangesRouteOptions): void {
  const deltas = createBuildCache<Buffer>({ max: MAX_CACHED_DELTAS, maxBytes: MAX_CACHED_DELTA_BYTES, sizeOf: (body) => body.length })

  /** The posts of `slugs` (those still served: one removed meanwhile shows as deleted in the next delta). */
  async function postsOf (slugs: readonly string[], query: ChangesQuery): Promise<Post[]> {
    const postQuery = { fields: query.fields, formats: query.formats }
    if (slugs.length <= LOOKUPS_AT_MOST) {
      const posts = await Promise.all(slugs.map(async (slug) => await store.findPostBySlug(slug, postQuery)))
      return posts.filter((post): post is Post => post !== undefined)
    }
    const wanted = new Set(slugs)
    const posts: Post[] = []
    for await (const batch of store.streamPosts(postQuery)) for (const post of batch) if (wanted.has(post.slug)) posts.push(post)
    return posts
  }

  async function deltaBody (change: Change, query: ChangesQuery): Promise<Buffer> {
    const upserted = await postsOf(change.upserted, query)
    return Buffer.from(`{"since":${JSON.stringify(change.since)},"until":${JSON.stringify(change.until)},` +
      `"upserted":[${upserted.map((post) => JSON.stringify(post)).join(',')}],"deleted":${JSON.stringify(change.deleted)}}`)
  }

  function wholeList (until: string, query: ChangesQuery): AsyncIterable<string> {
    return textInChunks(store.streamPosts({ fields: query.fields, formats: query.formats }),
      { text: (post) => JSON.stringify(post), open: `{"until":${JSON.stringify(until)},"upserted":[`, separator: ',', close: '],"deleted":[]}' })
  }

  async function changes (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = parseChangesQuery(request.url)
    await read(async () => { store.checkQuery(query) })
    const until = await read(() => sync.current())
    if (wantsEventStream(request.headers.accept)) {
      reply.hijack()
      const headers = Object.fromEntries(Object.entries(reply.getHeaders()).map(([name, value]) => [name, String(value)]))
      openEventStream(reply.raw, sync.hub, { from: resumeFrom(request.headers['last-event-id'], query.since), headers })
      return reply
    }
    reply.header('cache-control', 'no-store').header('content-type', JSON_CONTENT_TYPE)
    if (query.since === undefined) {
      const chunks = wholeList(until, query)[Symbol.asyncIterator]()
      // The first rows are read before answering: a store failure is still a clean 503.
      const first = await read(async () => await chunks.next())
      return await reply.send(resumedStream(first.done === true ? [] : [first.value], chunks))
    }
    const change = sync.since(query.since)
    if (change === undefined) return sendProblem(reply, 'sync-expired', SYNC_EXPIRED_DETAIL)
    const search = canonicalSearch({ fields: query.fields, formats: query.formats })
    return await reply.send(await read(() => deltas.get(`${change.since}\n${change.until}\n${search}`, () => deltaBody(change, query))))
  }

  api.get(POSTS_CHANGES_PATH, { schema }, changes)
}
