// The feeds' and sitemap's routes as schemas, for the front's OpenAPI document. Documentation
// only: the handlers check `tag` and the page themselves (src/front/feed-routes.ts, feed-documents.ts).
import { problemResponses } from '../http/docs/problem-schema.js'
import { LIST_QUERY, notModifiedResponse, REQUEST_HEADERS, successHeaders } from '../http/docs/route-schemas.js'
import { CACHE_STATUS } from './schemas.js'

const UPSTREAM_FAILURES = ['upstream-unreachable', 'upstream-bad-response', 'upstream-unavailable', 'upstream-timeout'] as const
const NOT_SET = 'A 404 `not-found` naming `SITE_URL` when it is not set.'

function documentRoute (operationId: string, summary: string, description: string, mediaType: string, query: boolean, params?: object): object {
  return {
    operationId,
    summary,
    description: `${description} ${NOT_SET} Exactly fresh, with a strong ETag (304 when current) and compressed like every answer.`,
    tags: ['feeds'],
    ...(query ? { querystring: { type: 'object', properties: { tag: LIST_QUERY.properties.tag } } } : {}),
    ...(params === undefined ? {} : { params }),
    headers: REQUEST_HEADERS,
    response: {
      200: { description: 'The document.', headers: { ...successHeaders(true), 'Cache-Status': CACHE_STATUS }, content: { [mediaType]: { schema: { type: 'string' } } } },
      304: notModifiedResponse(true),
      ...problemResponses(['not-found', ...(query ? ['invalid-query' as const] : []), ...UPSTREAM_FAILURES], { retryAfterOnGatewayErrors: true })
    }
  }
}

const FEED = 'The newest `FEED_SIZE` posts (default 20), or those with `tag`, linked by `POST_URL_TEMPLATE`, their `content` rendered (relative links and images resolved against `SITE_URL`); each item\'s summary is the `summary` column, else the computed `excerpt` of its text.'

export const FEED_ROUTE_SCHEMAS = {
  '/feed.xml': documentRoute('getRssFeed', 'RSS 2.0 feed', `${FEED} Each item's HTML is in \`content:encoded\`.`, 'application/rss+xml', true),
  '/feed.atom': documentRoute('getAtomFeed', 'Atom 1.0 feed', FEED, 'application/atom+xml', true),
  '/feed.json': documentRoute('getJsonFeed', 'JSON Feed 1.1', FEED, 'application/feed+json', true),
  '/sitemap.xml': documentRoute('getSitemap', 'Sitemap', 'Every post\'s URL with its `lastmod`; beyond 50,000 posts, a sitemap index of the pages `/sitemap-N.xml` at the site\'s root.', 'application/xml', false),
  '/sitemap-:page': documentRoute('getSitemapPage', 'A page of the sitemap', 'Page N (from 1) of a sitemap index, as `/sitemap-N.xml`; a page past the last is a 404.', 'application/xml', false, {
    type: 'object',
    required: ['page'],
    properties: { page: { type: 'string', pattern: '^[1-9][0-9]{0,8}\\.xml$', description: 'The page number and `.xml`: `1.xml`.' } }
  })
} as const
