// The post API's previews: `?preview=TOKEN` on the detail route serves the row whatever the
// publishing rule says, read afresh, never from or into any cache, `Cache-Control: private,
// no-store`. A token that is forged, expired or for another slug gets the very answer a missing
// post gets; without PREVIEW_SECRET, asking for a preview is a mistake (400).
import { POST_NOT_FOUND_DETAIL } from '../contract/problems.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { PostQuery } from '../contract/list-query.js'
import { PREVIEW_CACHE_CONTROL } from '../contract/preview.js'
import { sendProblem } from '../http/app.js'
import { createRepresentation, sendRepresentation } from '../http/representation.js'
import { verifyPreviewToken } from '../publishing/preview-token.js'
import type { PostStore } from '../store/store.js'

export interface PreviewReaderOptions {
  store: PostStore
  secret: string | undefined
  now: () => number
  /** The app's store-read wrapper (failures to problems). */
  read: <T>(query: () => Promise<T>) => Promise<T>
  /** The posts version now, and how the app labels an answer with it (a missing post's answer carries it). */
  version: () => Promise<string | undefined>
  labelVersion: (reply: FastifyReply, version: string | undefined) => void
}

export function createPreviewReader ({ store, secret, now, read, version, labelVersion }: PreviewReaderOptions) {
  /** Exactly what the detail route answers for a slug no post has. */
  async function notFound (reply: FastifyReply): Promise<FastifyReply> {
    labelVersion(reply, await version())
    return sendProblem(reply, 'post-not-found', POST_NOT_FOUND_DETAIL)
  }

  return {
    async serve (request: FastifyRequest, reply: FastifyReply, slug: string, query: PostQuery, token: string): Promise<FastifyReply> {
      if (secret === undefined) return sendProblem(reply, 'invalid-query', 'The preview parameter needs PREVIEW_SECRET on the post API, which is not set.')
      if (!verifyPreviewToken(secret, token, slug, now()) || store.findAnyPostBySlug === undefined) return await notFound(reply)
      const find = store.findAnyPostBySlug.bind(store)
      const post = await read(async () => await find(slug, query))
      if (post === undefined) return await notFound(reply)
      return await sendRepresentation(request, reply, createRepresentation(Buffer.from(JSON.stringify(post))), PREVIEW_CACHE_CONTROL)
    }
  }
}
