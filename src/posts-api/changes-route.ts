// The post API's sync route, `GET /api/posts/changes`: without `since` every post and the token of
// the state they make up; with it, the posts added or changed since and the slugs removed; a
// token this process does not hold is a 410 `sync-expired`. With `Accept: text/event-stream`, the
// live stream of changes (src/sync/change-hub.ts), resuming from `Last-Event-ID` or `since`.
//
// An answer is labelled with the state of the very posts it carries, each read with its row
// version: a writer may commit between learning the state and reading the posts, and a copy
// labelled with a state it does not hold would stay wrong once the store came back to that state
// (an edit undone, a post added and removed again), since the delta from there is then empty.
//
// A whole list keeps the slug and version of every post it sent until its last row (its token is
// their digest), so at most MAX_WHOLE_LISTS stream at once per process; the next is refused.
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { POSTS_CHANGES_PATH, parseChangesQuery, type ChangesQuery } from '../sync/changes-query.js'
import { canonicalSearch, type PostQuery } from '../contract/list-query.js'
import { ProblemError } from '../contract/problems.js'
import { sendProblem } from '../http/app.js'
import { JSON_CONTENT_TYPE } from '../http/representation.js'
import { createBuildCache } from '../lib/build-cache.js'
import { createConcurrencyGate, GateRefusedError } from '../lib/concurrency-gate.js'
import { resumedStream } from '../lib/resumed-stream.js'
import { textInChunks } from '../lib/text-chunks.js'
import { realTimers } from '../lib/timers.js'
import type { PostStore, VersionedPost } from '../store/store.js'
import type { Change } from '../sync/change.js'
import { openEventStream, resumeFrom, wantsEventStream } from '../sync/event-stream.js'
import type { PostsSync } from '../sync/posts-sync.js'
import { SYNC_EXPIRED_DETAIL } from '../sync/sse-frame.js'
import { stateToken, type RowVersions } from '../sync/state-token.js'

/** Deltas kept (each a `since`, `until` and `fields`): clients that sync on a schedule ask the same ones. */
const MAX_CACHED_DELTAS = 256
const MAX_CACHED_DELTA_BYTES = 32 * 1024 * 1024
/** Reads of a delta's posts, each after observing the state again, before a writer that keeps moving them gets 410. */
const DELTA_TRIES = 3

/**
 * Whole lists streaming at once per process: 4. Each holds the slug and version of every post it
 * sent until its last row, 125 to 200 bytes a post (12 to 20 MB on 100,000 posts), so four hold
 * at most 80 MB (8 MB on the 10,000 posts sync is made for). They share one event loop, so a
 * fifth at once would end no sooner than after them; and a client needs one only to start or
 * after a 410, so more at once is a flood, which a refusal costs nothing.
 */
export const MAX_WHOLE_LISTS = 4
/** Retry-After of a refused whole list: a list of 10,000 posts takes about a tenth of a second of the post API. */
export const WHOLE_LIST_RETRY_AFTER_S = 1

/** The posts read for a delta were not those of the state it leads to: a writer committed meanwhile. */
class MovedMeanwhile extends Error {}

export interface ChangesRouteOptions {
  sync: PostsSync
  /** The store as the list reads it (rendered content, computed fields). */
  store: PostStore
  /** The app's store read: failures become their problems (400, 503). */
  read: <T>(query: () => Promise<T>) => Promise<T>
  schema: object
}

const postQueryOf = (query: ChangesQuery): PostQuery => ({ fields: query.fields, formats: query.formats })

export function registerChangesRoute (api: FastifyInstance, { sync, store, read, schema }: ChangesRouteOptions): void {
  const deltas = createBuildCache<Buffer>({ max: MAX_CACHED_DELTAS, maxBytes: MAX_CACHED_DELTA_BYTES, sizeOf: (body) => body.length })
  // No queue: a turn is held for a whole stream, far longer than any client should wait for one.
  const wholeLists = createConcurrencyGate({ limit: MAX_WHOLE_LISTS, maxQueue: 0, maxWaitMs: 0, setTimeout: realTimers.setTimeout })

  /** The body of `change`, whose posts must be those of `versions` (the state `change.until`), or MovedMeanwhile. */
  async function deltaBody (change: Change, versions: RowVersions, query: ChangesQuery): Promise<Buffer> {
    const read = change.upserted.length === 0 ? [] : await store.findVersionedPostsBySlugs(change.upserted, postQueryOf(query))
    if (read.length !== change.upserted.length || read.some(({ post, version }) => versions.get(post.slug) !== version)) throw new MovedMeanwhile()
    return Buffer.from(`{"since":${JSON.stringify(change.since)},"until":${JSON.stringify(change.until)},` +
      `"upserted":[${read.map(({ post }) => JSON.stringify(post)).join(',')}],"deleted":${JSON.stringify(change.deleted)}}`)
  }

  async function delta (since: string, query: ChangesQuery, reply: FastifyReply): Promise<FastifyReply> {
    const search = canonicalSearch(postQueryOf(query))
    for (let tries = 1; ; tries++) {
      await read(() => sync.current())
      const change = sync.since(since)
      const versions = change === undefined ? undefined : sync.versionsOf(change.until)
      if (change === undefined || versions === undefined) break
      try {
        return await reply.send(await read(() => deltas.get(`${change.since}\n${change.until}\n${search}`, async () => await deltaBody(change, versions, query))))
      } catch (err) {
        if (!(err instanceof MovedMeanwhile)) throw err
        if (tries === DELTA_TRIES) break
      }
    }
    return sendProblem(reply, 'sync-expired', SYNC_EXPIRED_DETAIL)
  }

  /** Every post, then the token of the state they make up (known once they are all read). */
  function wholeList (query: ChangesQuery, log: FastifyBaseLogger): AsyncIterable<string> {
    const versions = new Map<string, string>()
    const text = ({ post, version }: VersionedPost): string => {
      versions.set(post.slug, version)
      return JSON.stringify(post)
    }
    const close = async (): Promise<string> => {
      const until = stateToken(versions)
      // Best effort: the answer is exact whatever happens here; a state this process could not
      // observe now only costs the client a 410 and a new whole list at its next sync.
      await sync.hold(until).catch((err: unknown) => {
        log.warn({ err }, 'sync could not observe the state of the whole list it answered; a client syncing from it may get 410')
      })
      return `],"deleted":[],"until":${JSON.stringify(until)}}`
    }
    return textInChunks(store.streamVersionedPosts(postQueryOf(query)), { text, open: '{"upserted":[', separator: ',', close })
  }

  async function changes (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const query = parseChangesQuery(request.url)
    await read(async () => { store.checkQuery(query) })
    if (wantsEventStream(request.headers.accept)) {
      await read(() => sync.current())
      reply.hijack()
      const headers = Object.fromEntries(Object.entries(reply.getHeaders()).map(([name, value]) => [name, String(value)]))
      openEventStream(reply.raw, sync.hub, { from: resumeFrom(request.headers['last-event-id'], query.since), headers })
      return reply
    }
    reply.header('cache-control', 'no-store').header('content-type', JSON_CONTENT_TYPE)
    if (query.since !== undefined) return await delta(query.since, query, reply)
    const leave = await wholeListTurn()
    const chunks = wholeList(query, request.log)[Symbol.asyncIterator]()
    let first
    try {
      // The first rows are read before answering: a store failure is still a clean 503.
      first = await read(async () => await chunks.next())
    } catch (err) {
      leave()
      throw err
    }
    const stream = resumedStream(first.done === true ? [] : [first.value], chunks)
    // Closed once it ended, failed, or was destroyed because the client left: its rows are let go.
    stream.once('close', leave)
    return await reply.send(stream)
  }

  /** A turn of the whole lists, or their refusal as the problem it is answered with. */
  async function wholeListTurn (): Promise<() => void> {
    try {
      return await wholeLists.enter()
    } catch (err) {
      if (!(err instanceof GateRefusedError)) throw err
      throw new ProblemError('overloaded', `Too many whole lists are being sent (at most ${MAX_WHOLE_LISTS} at once); try again shortly.`, { cause: err, retryAfter: WHOLE_LIST_RETRY_AFTER_S })
    }
  }

  api.get(POSTS_CHANGES_PATH, { schema }, changes)
}
