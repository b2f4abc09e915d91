// The sync route's parameters (`GET /api/changes` at the front, `/api/posts/changes` at the post
// API): `since`, the token of the state the client holds, and `fields` / `formats` as the detail
// route takes them, applied to each upserted post (`slug` is always kept: it is what a client
// applies a post by).
import { checkNames, invalidQuery, parsePostQuery, type PostQuery } from '../contract/list-query.js'
import { isStateToken } from './state-token.js'

export const CHANGES_PATH = '/api/changes'
export const POSTS_CHANGES_PATH = '/api/posts/changes'
export const CHANGES_PARAMETERS: readonly string[] = ['since', 'fields', 'formats']

export interface ChangesQuery extends PostQuery {
  since?: string
}

const SINCE_DETAIL = 'The since parameter is a token a previous answer gave as until (22 characters: letters, digits, - and _).'

/** The parameters of a sync request (`url`: the request target); an unknown, repeated or malformed one is a 400. */
export function parseChangesQuery (url: string): ChangesQuery {
  const question = url.indexOf('?')
  const params = new URLSearchParams(question === -1 ? '' : url.slice(question + 1))
  checkNames(params, CHANGES_PARAMETERS)
  const since = params.get('since') ?? undefined
  if (since !== undefined && !isStateToken(since)) throw invalidQuery(SINCE_DETAIL)
  return { ...parsePostQuery(url), ...(since === undefined ? {} : { since }) }
}

/** The query in canonical form (`?since=…&fields=…&formats=…`, or ''), as the front relays it. */
export function canonicalChangesSearch ({ since, fields, formats }: ChangesQuery): string {
  const parts = [
    ...(since === undefined ? [] : [`since=${since}`]),
    ...(fields === undefined ? [] : [`fields=${fields.join(',')}`]),
    ...(formats === undefined ? [] : [`formats=${formats.join(',')}`])
  ]
  return parts.length === 0 ? '' : `?${parts.join('&')}`
}
