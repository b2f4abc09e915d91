// The front's previews: a detail request with `?preview=TOKEN` goes to the post API as it is, by a
// call of its own (never from or into the front's copies, never shared with another request),
// and its answer is `Cache-Control: private, no-store`. The front does not check the token: the
// post API, which alone holds PREVIEW_SECRET, answers the same 404 for a bad token as for a
// missing post, and 400 when it has no secret.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { canonicalSearch, type PostQuery } from '../contract/list-query.js'
import { PREVIEW_CACHE_CONTROL, PREVIEW_PARAM } from '../contract/preview.js'
import { ProblemError, POST_NOT_FOUND_DETAIL } from '../contract/problems.js'
import { sendProblem } from '../http/app.js'
import { createRepresentation, sendRepresentation } from '../http/representation.js'
import type { UpstreamClient } from './upstream/client.js'

const NO_SECRET = 'The preview parameter needs PREVIEW_SECRET on the post API, which is not set.'

export async function relayPreview (upstream: UpstreamClient, request: FastifyRequest, reply: FastifyReply,
  { slug, query, token, maxBytes }: { slug: string, query: PostQuery, token: string, maxBytes: number }): Promise<FastifyReply> {
  const search = canonicalSearch(query)
  const path = `/api/post/${encodeURIComponent(slug)}${search === '' ? '?' : `${search}&`}${PREVIEW_PARAM}=${encodeURIComponent(token)}`
  const response = await upstream.get(path, { requestId: request.id, maxBytes })
  switch (response.status) {
    case 200: return await sendRepresentation(request, reply, createRepresentation(response.body), PREVIEW_CACHE_CONTROL)
    case 404: return sendProblem(reply, 'post-not-found', POST_NOT_FOUND_DETAIL)
    case 400: return sendProblem(reply, 'invalid-query', NO_SECRET)
    case 503: throw new ProblemError('upstream-unavailable', 'The upstream post API is unavailable; try again shortly.', { retryAfter: 1 })
    default: throw new ProblemError('upstream-bad-response', `The upstream post API answered with status ${response.status}.`)
  }
}
