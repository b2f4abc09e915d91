// The kinds of value a setting takes (ports, durations, counts, switches, the store's URL, the
// upstreams' URLs, origins, a pattern), each a zod schema from the text of an environment
// variable or flag to the value the process uses, with one short reason when the text is wrong.
import { availableParallelism } from 'node:os'
import { z } from 'zod'
import { DEFAULT_SLUG_PATTERN } from '../contract/slug.js'
import { parseSiteUrl } from '../feeds/post-url.js'
import { parseWebhookSecret } from '../sync/webhook-signature.js'

export type StoreLocation =
  | { dialect: 'sqlite', filename: string }
  | { dialect: 'postgres', url: string }
  | { dialect: 'mysql', url: string }

/** Thrown by a parser below: the reason the value is refused, reported as a zod issue. */
class Refused extends Error {}
const refuse = (reason: string): never => { throw new Refused(reason) }

/** A text that `parse` turns into a value, or refuses (with `refuse`) saying why. */
function parsedText<T> (parse: (text: string) => T): z.ZodType<T> {
  return z.string().transform((text, ctx) => {
    try {
      return parse(text)
    } catch (err) {
      if (!(err instanceof Refused)) throw err
      ctx.addIssue({ code: 'custom', message: err.message })
      return z.NEVER
    }
  })
}

export const milliseconds = (min: number): z.ZodType<number> => z.coerce.number({ error: 'expected milliseconds' })
  .int('expected whole milliseconds').min(min, `expected at least ${min} ms`).max(600_000, 'expected at most 600000 ms')

export const count = (min: number, max: number): z.ZodType<number> => z.coerce.number({ error: 'expected a whole number' })
  .int('expected a whole number').min(min, `expected at least ${min}`).max(max, `expected at most ${max}`)

export const port = z.coerce.number({ error: 'expected a port number' })
  .int('expected a whole port number').min(0, 'expected a port from 0 to 65535').max(65535, 'expected a port from 0 to 65535')

export const megabytes = z.coerce.number({ error: 'expected megabytes' })
  .int('expected whole megabytes').min(0, 'expected 0 or more').max(65_536, 'expected at most 65536')

/** 'on' → true, 'off' → false. */
export const onOff = z.enum(['on', 'off'], { error: "expected 'on' or 'off'" }).transform((value) => value === 'on')

/** 'true' → true, 'false' → false. */
export const trueFalse = z.enum(['true', 'false'], { error: "expected 'true' or 'false'" }).transform((value) => value === 'true')

/** A key: at least 32 characters, so that it cannot be guessed. */
export const secret = z.string().min(32, 'expected at least 32 characters')

export const logLevel = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
  { error: 'expected fatal, error, warn, info, debug, trace or silent' })

export const text = z.string().min(1, 'expected a value')

export const headerValue = z.string().regex(/^[\x20-\x7e]+$/, 'expected a header value of printable ASCII')

/** A count of processes, or 'auto': one per core. */
export const processCount = z.union([z.literal('auto').transform(() => availableParallelism()), count(1, 256)],
  { error: "expected a whole number from 1 to 256, or 'auto'" })

/** '*' (any origin), 'off' (none: []) or a comma-separated list of origins. */
export const corsOrigins = parsedText((value): '*' | string[] => {
  if (value === '*') return '*'
  if (value === 'off') return []
  const origins = value.split(',').map((origin) => origin.trim())
  for (const origin of origins) {
    if (!URL.canParse(origin) || new URL(origin).origin !== origin) refuse(`"${origin}" is not an origin like https://example.com`)
  }
  return origins
})

export const regularExpression = parsedText((source) => {
  if (source === DEFAULT_SLUG_PATTERN.source) return DEFAULT_SLUG_PATTERN
  try {
    return new RegExp(source)
  } catch {
    return refuse('expected a valid regular expression')
  }
})

const SCHEME = /^([a-z][a-z0-9+.-]*):/i

/** A file path or `sqlite:` URL, `postgres(ql)://`, `mysql://` or `mariadb://`. */
export const storeLocation = parsedText((value): StoreLocation => {
  const scheme = SCHEME.exec(value)?.[1]?.toLowerCase()
  if (scheme === undefined) return sqliteFile(value)
  switch (scheme) {
    case 'sqlite': {
      // sqlite:relative/path, sqlite:///absolute/path
      const rest = value.slice('sqlite:'.length)
      const filename = rest.startsWith('//') ? decodeURIComponent(new URL(value).pathname) : rest
      if (filename === '') refuse('the sqlite: URL names no file')
      return sqliteFile(filename)
    }
    case 'postgres':
    case 'postgresql':
      if (!URL.canParse(value)) refuse('not a valid URL')
      return { dialect: 'postgres', url: value }
    case 'mysql':
    case 'mariadb':
      if (!URL.canParse(value)) refuse('not a valid URL')
      return { dialect: 'mysql', url: value.replace(SCHEME, 'mysql:') }
    default:
      return refuse(`unknown store scheme "${scheme}:" (use a file path, sqlite:, postgres://, mysql:// or mariadb://)`)
  }
})

/**
 * An in-memory database would be empty and private to its one connection: the post API opens
 * it read-only (nothing could ever be written to it) and streams lists on connections of their
 * own (which would each see another, empty database). Refused rather than served empty.
 */
function sqliteFile (filename: string): StoreLocation {
  if (filename === ':memory:') refuse('an in-memory SQLite database cannot serve posts (name a file)')
  return { dialect: 'sqlite', filename }
}

/** A field name (RFC 9110 §5.1: a token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
/** Headers the answers carry already, which a cache tag header would overwrite or corrupt. */
const ANSWER_HEADER = /^(?:content-.*|access-control-.*|cache-control|cache-status|etag|vary|link|allow|retry-after|date|connection|keep-alive|transfer-encoding|x-request-id|x-total-count)$/i

/** 'off' (none: []) or header names, comma-separated, distinct whatever their case. */
export const headerNames = parsedText((value): string[] => {
  if (value === 'off') return []
  const names = value.split(',').map((name) => name.trim())
  const seen = new Set<string>()
  for (const name of names) {
    if (!TOKEN.test(name)) refuse(`"${name}" is not a header name`)
    if (ANSWER_HEADER.test(name)) refuse(`${name} is a header the answers carry already`)
    if (seen.has(name.toLowerCase())) refuse(`${name} is listed twice`)
    seen.add(name.toLowerCase())
  }
  return names
})

/** One or more base URLs, comma-separated; each keeps its own base path. */
export const baseUrls = parsedText((value): URL[] => {
  const urls = value.split(',').map((entry, index) => {
    if (entry.trim() === '') refuse(`entry ${index + 1} of the comma-separated list is empty`)
    return baseUrl(entry.trim())
  })
  const seen = new Set<string>()
  for (const url of urls) {
    if (seen.has(url.href)) refuse(`"${url.href}" is listed twice`)
    seen.add(url.href)
  }
  return urls
})

function baseUrl (value: string): URL {
  if (!URL.canParse(value)) refuse(`"${value}" is not a URL`)
  const url = new URL(value)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('expected an http:// or https:// URL')
  if (url.search !== '' || url.hash !== '') refuse('expected a base URL without query or fragment')
  if (url.username !== '' || url.password !== '') refuse('credentials in the URL are not supported')
  return url
}

/** Webhook receivers: absolute http(s) URLs, comma-separated (a query may carry the receiver's own token). */
export const webhookUrls = parsedText((value): URL[] => {
  const urls = value.split(',').map((entry, index) => {
    const text = entry.trim()
    if (text === '') refuse(`entry ${index + 1} of the comma-separated list is empty`)
    if (!URL.canParse(text)) refuse(`"${text}" is not a URL`)
    const url = new URL(text)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('expected http:// or https:// URLs')
    return url
  })
  if (new Set(urls.map((url) => url.href)).size !== urls.length) refuse('a URL is listed twice')
  return urls
})

/** A Standard Webhooks secret, `whsec_` and base64 of 24 to 64 bytes: its key. */
export const webhookSecret = parsedText((value): Buffer => {
  try {
    return parseWebhookSecret(value)
  } catch (err) {
    return refuse((err as Error).message)
  }
})

/** Column names, comma-separated (letters, digits and underscores, not starting with a digit). */
export const columnNames = parsedText((value): string[] => {
  const names = value.split(',').map((name) => name.trim())
  const bad = names.find((name) => !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name))
  if (bad !== undefined) refuse(`"${bad}" is not a column name`)
  return names
})

/** The public site's absolute http(s) URL, without query or fragment. */
export const siteUrl = parsedText((value): URL => {
  try {
    return parseSiteUrl(value)
  } catch (err) {
    return refuse((err as Error).message)
  }
})
