// Markdown is rendered once per content, not once per request nor once per posts version: the
// cache is keyed by a SHA-256 of the source text alone, so a commit that changes one post (or
// none that this process renders) costs no other post a render. Keyed by a digest rather than
// by the text itself, so that a key costs 43 bytes however long the post. Bounded in entries and
// in bytes; a rendering larger than the whole byte budget is returned but not kept.
import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { MarkdownRenderer, RenderedMarkdown } from './markdown-renderer.js'

export interface RenderCacheOptions {
  render: MarkdownRenderer
  /** Renderings kept at most. */
  maxEntries: number
  /** Bytes kept at most, counted as two per UTF-16 unit of the html and text (an upper bound of V8's strings). */
  maxBytes: number
}

export interface RenderCache {
  /** The rendering of `source`, from the cache when this source was rendered before. */
  render: (source: string) => RenderedMarkdown
  /** Renderings kept (for tests and metrics). */
  readonly size: number
}

/** Fixed cost of an entry beyond its strings: the key, the record, the cache's own links. */
const ENTRY_OVERHEAD_BYTES = 200

export const DEFAULT_RENDER_CACHE_ENTRIES = 10_000
export const DEFAULT_RENDER_CACHE_BYTES = 64 * 1024 * 1024

export function renderingBytes ({ html, text }: RenderedMarkdown): number {
  return 2 * (html.length + text.length) + ENTRY_OVERHEAD_BYTES
}

export function createRenderCache ({ render, maxEntries, maxBytes }: RenderCacheOptions): RenderCache {
  const renderings = new LRUCache<string, RenderedMarkdown>({ max: maxEntries, maxSize: maxBytes, sizeCalculation: renderingBytes })
  return {
    render (source) {
      const key = createHash('sha256').update(source).digest('base64url')
      const kept = renderings.get(key)
      if (kept !== undefined) return kept
      const rendered = render(source)
      renderings.set(key, rendered)
      return rendered
    },
    get size () {
      return renderings.size
    }
  }
}
