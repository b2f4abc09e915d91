// `blog-read-api preview-url SLUG [--ttl 1h]`: a front URL that shows the post until it expires.
import type { Writable } from 'node:stream'
import { ConfigError, type Config } from '../config.js'
import { createSlugValidator } from '../contract/slug.js'
import { PREVIEW_PARAM } from '../contract/preview.js'
import { UsageError } from '../cli/command-line.js'
import { mintPreviewToken, parseTtl } from './preview-token.js'

const DEFAULT_TTL = '1h'

export function printPreviewUrl ({ slug, ttl = DEFAULT_TTL, config, stdout, now }: {
  slug: string
  ttl?: string
  config: Config
  stdout: Pick<Writable, 'write'>
  now: number
}): void {
  if (config.previewSecret === undefined) throw new ConfigError('PREVIEW_SECRET', 'preview-url needs it (the post API must have the same)')
  const ttlMs = parseTtl(ttl)
  if (ttlMs === undefined) throw new UsageError(`--ttl ${ttl}: expected a duration such as 90s, 30m, 1h or 7d`)
  if (!createSlugValidator(config.slugPattern)(slug)) throw new UsageError(`invalid slug "${slug}": the front refuses it (SLUG_PATTERN)`)
  const token = mintPreviewToken(config.previewSecret, slug, now + ttlMs)
  const host = config.host.includes(':') ? `[${config.host}]` : config.host
  stdout.write(`http://${host}:${config.blogPort}/api/blog/${encodeURIComponent(slug)}?${PREVIEW_PARAM}=${token}\n`)
}
